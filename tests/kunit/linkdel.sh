# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Device removal after a flood of held REQs, repeated: sourced by the PID-1
# scripts of the test kernels (UML and the SMP debug kernel in qemu),
# after tests/uml-lib.sh.
#
# linkdel_rounds <netdev> <rounds> <out dir>: each round adds rxe0 on
# <netdev>, runs the cm_peer_fuzz suite (its flood holds REQs, with a hold
# age longer than the suite), then deletes rxe0 after a random 0-1 s,
# while the REJs for them (sent when the suite's peer ids went away, which
# ends what was held for them) may still be in flight, and
# checks that nothing stayed held.  The suite cannot run during the deletion:
# its MAD agent is not an IB client, so the MAD layer's removal would pull
# the port from under it; and rxe cannot be deleted while a user-space
# process has it open.  One line per round in <out>/linkdel.tsv:
# "<round> <REQs held at deletion> <rdma link delete rc>".  rxe0 is left
# deleted; the caller adds it back if it needs it.
linkdel_rounds() {
	local nd=$1 rounds=$2 out=$3 i held rc cases0
	local cases=/sys/module/cm_peer_ib_test/parameters/fuzz_cases

	# the suite's REQs stay held 5 s (its bounds): the deletion comes first
	cases0=$(cat $cases 2>/dev/null || echo 0)
	echo 50 >$cases 2>/dev/null
	: >"$out/linkdel.tsv"
	for i in $(seq "$rounds"); do
		[ -e /sys/class/infiniband/rxe0 ] ||
			rdma link add rxe0 type rxe netdev "$nd" || break
		sleep 1
		echo 1 >/sys/kernel/debug/kunit/cm_peer_fuzz/run
		sleep "0.$((RANDOM % 10))"
		held=$(uml_held_now)
		timeout 120 rdma link delete rxe0
		rc=$?
		echo "$i $held $rc" >>"$out/linkdel.tsv"
	done
	echo "$cases0" >$cases 2>/dev/null
}
