#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# PID 1 of the UML test kernel (hostfs root).  Built-in KUnit suites have
# already run when this starts; here we ask kmemleak for a report on
# everything the tests allocated, store it on the host and power off.
# P2P_OUT (from the kernel command line) is the host folder for results.
. "$(dirname "$0")/../uml-lib.sh"
uml_mount
# /dev/infiniband/* for the librdmacm users of stage 3
mount -t devtmpfs devtmpfs /dev 2>/dev/null

out=${P2P_OUT:-/tmp}

# Stage 2: the suites that need an RDMA device.  Soft-RoCE on one end of a
# veth pair (addresses from the 198.18.0.0/15 test range); the suite
# connects QPs on it in loopback, then reports through debugfs.
{
	set -x
	ip link add veth0 type veth peer name veth1 &&
	ip addr add 198.18.0.1/24 dev veth0 &&
	ip link set veth0 up && ip link set veth1 up &&
	rdma link add rxe0 type rxe netdev veth0 &&
	sleep 2 &&
	rdma link show && ip addr show veth0
	set +x
} >"$out/ib-setup.log" 2>&1
for suite in cm_p2p_ib cm_p2p_fault cm_p2p_fuzz; do
	dir=/sys/kernel/debug/kunit/$suite
	if [ -w "$dir/run" ]; then
		echo 1 >"$dir/run"
		cat "$dir/results" >"$out/ktap-$suite.txt"
	fi
done
# make stress (P2P_ROUNDS from the command line): the fault and fuzz
# suites again, rounds 2..N, results in ktap-<suite>.r<N>.txt
for round in $(seq 2 "${P2P_ROUNDS:-1}"); do
	for suite in cm_p2p_fault cm_p2p_fuzz; do
		dir=/sys/kernel/debug/kunit/$suite
		[ -w "$dir/run" ] || continue
		echo 1 >"$dir/run"
		cat "$dir/results" >"$out/ktap-$suite.r$round.txt"
	done
done
# diagnostics for the IB suites: device and CM counters
grep -H '' /sys/class/infiniband/*/ports/*/hw_counters/* \
	/sys/class/infiniband/*/ports/*/cm_*/* 2>/dev/null |
	sed 's|:| |' >"$out/ib-counters.txt"

# Stage 3: librdmacm users (p2p_ping, P2P_BIN) torn down mid-collision,
# in loopback on rxe0 between two local addresses.  lb binds at once but
# connects 3 s late, so la's REQ is held by lb meanwhile.
#  - td-kill: la is killed (SIGKILL) while its REQ is held;
#  - td-linkdel: rxe0 is deleted (rdma link delete) while it is held.
# Each process must exit on its own, with a failure, well before the
# 30 s timeout; KASAN, lockdep and kmemleak watch the kernel side.
td_pair() {	# td_pair <name> <port> <action...>
	local name=$1 port=$2 la lb
	shift 2
	timeout 30 "$P2P_BIN" --local 198.18.0.1 --remote 198.18.0.3 \
		--port "$port" --name la --shared-host --timeout-ms 12000 \
		>"$out/$name-la.log" 2>&1 &
	la=$!
	timeout 30 "$P2P_BIN" --local 198.18.0.3 --remote 198.18.0.1 \
		--port "$port" --name lb --shared-host --timeout-ms 12000 \
		--delay-ms 3000 >"$out/$name-lb.log" 2>&1 &
	lb=$!
	sleep 1.5
	"$@" "$la"
	wait "$la"
	echo $? >"$out/$name-la.rc"
	wait "$lb"
	echo $? >"$out/$name-lb.rc"
}
kill_la() { kill -KILL $(pgrep -P "$1"); }	# p2p_ping under timeout
link_delete() { rdma link delete rxe0; }
if [ -x "${P2P_BIN:-}" ]; then
	{
		set -x
		ip addr add 198.18.0.3/24 dev veth0
		sleep 1
		td_pair td-kill 7490 kill_la
		td_pair td-linkdel 7491 link_delete
		rdma link show
		set +x
	} >"$out/td.log" 2>&1
fi
uml_finish "$out"
