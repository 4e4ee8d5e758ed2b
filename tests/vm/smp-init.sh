#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# PID 1 of the SMP debug kernel's KUnit run (tests/vm/run-smp.sh), root =
# the host's / over 9p.  The built-in KUnit suites have run at boot; the
# suites that need an RDMA device (tests/kunit/dev-suites.txt, the list
# tests/kunit/uml-init.sh runs too) run again here through debugfs, on
# soft-RoCE over one end of a veth pair, as in the UML kernel.  Then
# device removal against held REQs (tests/kunit/linkdel.sh,
# PEER_LINKDEL_ROUNDS rounds), a kmemleak report, power off.  From the
# kernel command line: PEER_SHARE (the writable share), PEER_OUT (results:
# ktap-<suite>.txt, ib-*.txt, linkdel.tsv, kmemleak.*), PEER_DEV_SUITES
# (the suite list).
. "$(dirname "$0")/../uml-lib.sh"
. "$(dirname "$0")/vm-guest.sh"
. "$(dirname "$0")/../kunit/linkdel.sh"
vm_mount

out=$PEER_OUT
mkdir -p "$out"
exec >"$out/init.log" 2>&1
echo "$(uname -r), $(nproc) CPUs, $(date -u)"

uml_loop_rxe "$out"

# A suite may leave REQs held on purpose (the fuzz suite's flood): let
# them expire before the next suite, which counts the queue.
wait_unheld() {
	local i limit
	limit=80	# the suites hold REQs for 5 s at most (their bound)
	for i in $(seq "$limit"); do
		[ "$(uml_held_now)" -le 0 ] && return 0
		sleep 0.1
	done
	echo "still $(uml_held_now) REQs held after $((limit / 10)) s"
}
run_suite() {	# run_suite <suite>: results in ktap-<suite>.txt
	local dir=/sys/kernel/debug/kunit/$1 start
	if [ ! -w "$dir/run" ]; then
		echo "suite $1: no $dir/run"
		return 0
	fi
	wait_unheld
	start=$(date +%s)
	echo 1 >"$dir/run"
	cat "$dir/results" >"$out/ktap-$1.txt"
	echo "suite $1: $(($(date +%s) - start)) s"
}
while read -r suite _; do
	case "$suite" in
	'' | '#'*) continue ;;
	esac
	run_suite "$suite"
done <"$PEER_DEV_SUITES"

grep -H '' /sys/class/infiniband/*/ports/*/hw_counters/* \
	/sys/class/infiniband/*/ports/*/cm_*/* 2>/dev/null |
	sed 's|:| |' >"$out/ib-counters.txt"

# device removal with REQs held, PEER_LINKDEL_ROUNDS times
if [ -e /sys/class/infiniband/rxe0 ]; then
	wait_unheld
	linkdel_rounds veth0 "${PEER_LINKDEL_ROUNDS:-1}" "$out" >"$out/linkdel.log" 2>&1
fi
uml_finish "$out"
