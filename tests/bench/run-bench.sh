#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# `make bench`: the benchmarks, separate from the tests.
#
#  1. builds the benchmark UML kernel (tests/bench/bench.kunitconfig: no
#     KASAN/lockdep/kmemleak, with the cm_peer_bench suite) in
#     build/uml-bench;
#  2. hot path: runs the cm_peer_bench KUnit suite (REQ decision cost);
#  3. connections: boots two UML hosts over a vector link with soft-RoCE
#     (as the e2e test) running tests/bench/uml-bench-init.sh: single-pair
#     peer / client-server / workaround / held rounds, then storms of R x R
#     ranks, then root's 4 x 4 peer storm under user nobody's floods of
#     unanswered peer REQs, then traced single-pair rounds, then on host a the KUnit
#     suite cm_peer_req_bench (the CM's cost per inbound REQ);
#  4. tests/bench/bench-report.py: build/results/bench/{bench.json,
#     latency.csv, latency.png, storms.png, summary.md}, printed at the
#     end; tests/bench/trace-round.py: trace.md;
#  5. the storms again on BENCH_HOSTS (default 4; 0 for none) UML hosts
#     on a bridge of this host (root), BENCH_HOSTS_RANKS ranks per host
#     (default "4 8 16 20": 96 to 2400 connections, 1200 per host), report
#     in build/results/bench-hosts/;
#  6. the storms again on two SMP qemu VMs with Debian's kernel and our
#     modules (tests/bench/run-bench-vm.sh, report in
#     build/results/bench-vm/; needs `make`, which `make bench` runs);
#  7. RDS/IB on two such VMs (tests/rds/run-rds.sh: RDS_CONNS connections,
#     default "16 64", RDS_REPEAT runs, default 3): first connects and
#     reconnects of all at once, kept as tests/bench/results/<date>-rds.md
#     (BENCH_RDS=0: no step 7; BENCH_ONLY=rds: only it).
#
# BENCH_ROUNDS (default 200), BENCH_RANKS (ranks per host of the storms,
# default "4 8 16 32": 16 to 1024 connections), BENCH_REPEAT (storms per
# size and mode, default 5), BENCH_STORM_ARGS (more peer_bench arguments
# for the storms, e.g. --no-send), BENCH_FLOOD (flood sizes, ids, of the
# flood runs, 0 for unloaded, default "0 1024 4096"; "" for none) and
# BENCH_DELAY_US (netem delay on each host's link, default 0) tune it; BENCH_ONLY=hotpath stops after step 2,
# BENCH_ONLY=reqpath runs only cm_peer_req_bench in step 3,
# BENCH_ONLY=conn only the connection benchmarks of steps 3, 5 and 6
# (BENCH_VM=0: no step 6), BENCH_ONLY=hosts only step 5,
# BENCH_LIBRDMACM=<dir> runs the UML hosts' programs on the librdmacm.so.1
# in <dir> (LD_LIBRARY_PATH), e.g. rdma-core v44.0 built with the series
# in rdma-core/patches, whose librdmacm is told a passive peer end's
# ESTABLISHED at the RTU; by default they run on the host's.
# BENCH_ONLY=trace only the single-pair peer, held and client/server
# rounds with the kernel trace on, one round of each kind printed on one time line
# (tests/bench/trace-round.py, into trace.md).
set -uo pipefail
. "$(dirname "$0")/../../scripts/common.sh"
. "$(dirname "$0")/../uml-pair.sh"
. "$TOP/tests/bench/bench-lib.sh"

# 7. RDS/IB on the VM stage
bench_rds() {
	local rc=0

	log "RDS/IB on two VMs: tests/rds/run-rds.sh"
	RDS_CONDITIONS="\`make bench\` run of $(date -u '+%F %H:%M') UTC, commit $(git -C "$TOP" describe --always --dirty), on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), two qemu VMs (TCG, ${VM_CPUS:-2} vCPUs each, Debian $KRELEASE)." \
		"$TOP/tests/rds/run-rds.sh" || rc=1
	[ -s "$BUILD/results/rds/summary.md" ] &&
		cp "$BUILD/results/rds/summary.md" \
			"$TOP/tests/bench/results/$(date -u +%F-%H%M)-rds.md"
	return $rc
}
if [ "${BENCH_ONLY:-}" = rds ]; then
	bench_rds
	exit
fi

B=$BUILD/results/bench
L=$BUILD/results/bench-hosts
BENCH_OUT=$BUILD/uml-bench
rm -rf "$L"
mkdir -p "$L/sync"
if [ "${BENCH_ONLY:-}" = hosts ]; then
	B=$L	# the build's logs; the two-host results stay
else
	rm -rf "$B"
	mkdir -p "$B/a" "$B/b" "$B/sync"
fi

PEER_LIB=${BENCH_LIBRDMACM:-}
RDMACM_DESC="the host's librdmacm"
if [ -n "$PEER_LIB" ]; then
	[ -f "$PEER_LIB/librdmacm.so.1" ] ||
		die "BENCH_LIBRDMACM: no librdmacm.so.1 in $PEER_LIB"
	RDMACM_DESC="librdmacm of ${PEER_LIB#"$TOP"/}"
fi

log "building the benchmark UML kernel in ${BENCH_OUT#"$TOP"/}"
(cd "$SRC" && python3 tools/testing/kunit/kunit.py build \
	--build_dir="$BENCH_OUT" --kunitconfig="$TOP/tests/bench/bench.kunitconfig" \
	--jobs="$JOBS") >"$B/build.log" 2>&1 || {
	tail -30 "$B/build.log"
	die "benchmark kernel build failed"
}
uml_userspace_check "$BENCH_OUT/linux" "$B" ||
	die "UML user space does not run: no benchmark"

case "${BENCH_ONLY:-}" in reqpath | conn | trace | hosts) ;; *)
	log "hot path: KUnit suite cm_peer_bench"
	(cd "$SRC" && python3 tools/testing/kunit/kunit.py exec \
		--build_dir="$BENCH_OUT" --raw_output=all --timeout=900 \
		'cm_peer_bench') >"$B/kunit.log" 2>&1
	echo $? >"$B/kunit.rc"
	grep -o 'bench: .*' "$B/kunit.log" >"$B/hotpath.txt"
	;;
esac
if [ "${BENCH_ONLY:-}" = hotpath ]; then
	cat "$B/hotpath.txt"
	exit "$(cat "$B/kunit.rc")"
fi

bench_build_peer_bench

# 5. the storms on more hosts: BENCH_HOSTS UML kernels on one bridge
bench_hosts() {
	local n=${BENCH_HOSTS:-4} h names=(a b c d e f g h)

	[ "$n" -gt 2 ] || return 0
	if [ "$(id -u)" != 0 ]; then
		[ "${BENCH_ONLY:-}" = hosts ] && die "step 5 needs root (a bridge)"
		log "not root: no storms on $n hosts (step 5 needs a bridge)"
		return 0
	fi
	log "storms on $n UML hosts on a bridge"
	# the report counts the hosts by their folders
	for h in "${names[@]:0:n}"; do
		mkdir -p "$L/$h"
	done
	uml_lan "$BENCH_OUT/linux" "${BENCH_TIMEOUT:-3600}" "$L" "$L/sync" \
		"$TOP/tests/bench/uml-bench-init.sh" "$n" mem=2G \
		BENCH_ONLY=storm PEER_BIN="$BUILD/peer_bench" PEER_LIB="$PEER_LIB" \
		BENCH_RANKS="$(echo "${BENCH_HOSTS_RANKS-4 8 16 20}" | tr ' ' ,)" \
		BENCH_REPEAT="${BENCH_REPEAT:-5}" \
		BENCH_STORM_ARGS="$(echo "${BENCH_STORM_ARGS:-}" | tr ' ' ,)" \
		BENCH_DELAY_US="${BENCH_DELAY_US:-0}" || return 1
	bench_report "$L" "$n UML kernels on a bridge, $RDMACM_DESC" \
		"uml-${n}hosts"
}
if [ "${BENCH_ONLY:-}" = hosts ]; then
	bench_hosts
	exit
fi

log "connection benchmarks on two UML hosts"
uml_pair "$BENCH_OUT/linux" "${BENCH_TIMEOUT:-3600}" "$B" "$B/sync" \
	"$TOP/tests/bench/uml-bench-init.sh" mem=2G BENCH_ONLY="${BENCH_ONLY:-}" \
	kunit.enable=1 kunit.filter_glob=cm_peer_req_bench \
	PEER_BIN="$BUILD/peer_bench" PEER_LIB="$PEER_LIB" \
	BENCH_ROUNDS="${BENCH_ROUNDS:-200}" \
	BENCH_RANKS="$(echo "${BENCH_RANKS-4 8 16 32}" | tr ' ' ,)" \
	BENCH_REPEAT="${BENCH_REPEAT:-5}" \
	BENCH_STORM_ARGS="$(echo "${BENCH_STORM_ARGS:-}" | tr ' ' ,)" \
	BENCH_FLOOD="$(echo "${BENCH_FLOOD-0 1024 4096}" | tr ' ' ,)" \
	BENCH_DELAY_US="${BENCH_DELAY_US:-0}"

if [ "${BENCH_ONLY:-}" = trace ]; then
	python3 "$TOP/tests/bench/trace-round.py" "$B"
	exit
fi
grep -o 'bench: .*' "$B/a/ktap-req-bench.txt" >"$B/reqpath.txt" 2>/dev/null ||
	log "no REQ path results (a/ktap-req-bench.txt)"
if [ "${BENCH_ONLY:-}" = reqpath ]; then
	cat "$B/reqpath.txt"
	grep -Eq '^[[:space:]]*ok 1 peer_bench_req' "$B/a/ktap-req-bench.txt"
	exit
fi
rc=0
bench_report "$B" "two UML kernels, $RDMACM_DESC" uml || rc=1
python3 "$TOP/tests/bench/trace-round.py" "$B" >/dev/null &&
	log "one traced round of each kind: ${B#"$TOP"/}/trace.md"

if [ -z "${BENCH_ONLY:-}" ] || [ "${BENCH_ONLY:-}" = conn ]; then
	bench_hosts || rc=1
fi

# 6. the storms again on the SMP VM stage (Debian's kernel)
if [ "${BENCH_VM:-1}" != 0 ] &&
   { [ -z "${BENCH_ONLY:-}" ] || [ "${BENCH_ONLY:-}" = conn ]; }; then
	log "storms on two SMP VMs: tests/bench/run-bench-vm.sh"
	BENCH_ROUNDS=0 "$TOP/tests/bench/run-bench-vm.sh" || rc=1
fi

if [ "${BENCH_RDS:-1}" != 0 ] && [ -z "${BENCH_ONLY:-}" ]; then
	bench_rds || rc=1
fi
exit $rc
