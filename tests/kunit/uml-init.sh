#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# PID 1 of the UML test kernel (hostfs root).  Built-in KUnit suites have
# already run when this starts; here we ask kmemleak for a report on
# everything the tests allocated, store it on the host and power off.
# P2P_OUT (from the kernel command line) is the host folder for results.
. "$(dirname "$0")/../uml-lib.sh"
uml_mount

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
# diagnostics for the IB suites: device and CM counters
grep -H '' /sys/class/infiniband/*/ports/*/hw_counters/* \
	/sys/class/infiniband/*/ports/*/cm_*/* 2>/dev/null |
	sed 's|:| |' >"$out/ib-counters.txt"
uml_finish "$out"
