#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# PID 1 of the UML test kernel (hostfs root).  Built-in KUnit suites have
# already run when this starts; here we ask kmemleak for a report on
# everything the tests allocated, store it on the host and power off.
# PEER_OUT (from the kernel command line) is the host folder for results.
. "$(dirname "$0")/../uml-lib.sh"
. "$(dirname "$0")/linkdel.sh"
uml_mount
# /dev/infiniband/* for the librdmacm users of stage 3
mount -t devtmpfs devtmpfs /dev 2>/dev/null

out=${PEER_OUT:-/tmp}

# Stage 2: the suites that need an RDMA device.  Soft-RoCE on one end of a
# veth pair (addresses from the 198.18.0.0/15 test range); the suite
# connects QPs on it in loopback, then reports through debugfs.
uml_loop_rxe "$out"
run_suite() {	# run_suite <suite> <ktap file>
	local dir=/sys/kernel/debug/kunit/$1
	[ -w "$dir/run" ] || return 0
	echo 1 >"$dir/run"
	cat "$dir/results" >"$out/$2"
}

# Stage 3: librdmacm users (peer_ping, PEER_BIN) torn down mid-collision,
# in loopback on rxe0 between two local addresses.  Both bind at once; la
# connects at a start time T, lb at T + 6 s, so lb's CM holds la's REQ
# meanwhile; as soon as it is held, la is killed (SIGKILL).  lb must exit
# on its own, with a failure, well before the 40 s watchdog: la's REJ
# withdrew the held REQ, nothing is bound at la's port any more, so lb's
# REQ is rejected there and sent again (la could come back) until lb's
# own 12 s timeout.  UML's sleeps can lag the
# wall clock under load, so the kill waits for the hold, not for a time.
td_kill() {	# td_kill <port>; results in td-kill*
	local name=td-kill port=$1 la lb start i
	local held=/sys/class/infiniband/rxe0/ports/1/cm_peer/held held0
	held0=$(cat $held)
	start=$(($(date +%s%3N) + 1500))
	"$PEER_BIN" --local 198.18.0.1 --remote 198.18.0.3 \
		--port "$port" --name la --shared-host --timeout-ms 12000 \
		--start-ms "$start" >"$out/$name-la.log" 2>&1 &
	la=$!
	"$PEER_BIN" --local 198.18.0.3 --remote 198.18.0.1 \
		--port "$port" --name lb --shared-host --timeout-ms 12000 \
		--start-ms "$start" --delay-ms 6000 >"$out/$name-lb.log" 2>&1 &
	lb=$!
	# watchdog: a process still there after 40 s is killed (rc 137)
	(sleep 40; kill -KILL "$la" "$lb" 2>/dev/null) &
	for i in $(seq 200); do
		[ "$(cat $held)" -gt "$held0" ] && break
		sleep 0.05
	done
	uml_held_now >"$out/$name.held"
	kill -KILL "$la"
	wait "$la"
	echo $? >"$out/$name-la.rc"
	wait "$lb"
	echo $? >"$out/$name-lb.rc"
}

run_suite cm_peer_ib ktap-cm_peer_ib.txt
run_suite cm_peer_fault ktap-cm_peer_fault.txt
run_suite cm_peer_race ktap-cm_peer_race.txt
run_suite cm_peer_rdma ktap-cm_peer_rdma.txt
if [ -x "${PEER_BIN:-}" ]; then
	{
		set -x
		ip addr add 198.18.0.3/24 dev veth0
		# let what the suites left held expire first (5 s, their bound)
		sleep 7
		td_kill 7490
		set +x
	} >"$out/td.log" 2>&1
fi
run_suite cm_peer_fuzz ktap-cm_peer_fuzz.txt
# make stress (PEER_ROUNDS from the command line): the fault and fuzz
# suites again, rounds 2..N, results in ktap-<suite>.r<N>.txt
for round in $(seq 2 "${PEER_ROUNDS:-1}"); do
	run_suite cm_peer_fault "ktap-cm_peer_fault.r$round.txt"
	run_suite cm_peer_fuzz "ktap-cm_peer_fuzz.r$round.txt"
done
# diagnostics for the IB suites: device and CM counters
grep -H '' /sys/class/infiniband/*/ports/*/hw_counters/* \
	/sys/class/infiniband/*/ports/*/cm_*/* 2>/dev/null |
	sed 's|:| |' >"$out/ib-counters.txt"

# Stage 4: device removal with REQs held (tests/kunit/linkdel.sh); rxe
# cannot be removed while a user-space process has it open, so the REQs
# come from the fuzz suite's flood.  KASAN and kmemleak watch the drain.
if [ -e /sys/class/infiniband/rxe0 ]; then
	linkdel_rounds veth0 "${PEER_LINKDEL_ROUNDS:-1}" "$out" >>"$out/td.log" 2>&1
fi
uml_finish "$out"
