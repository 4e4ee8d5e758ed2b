# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Shared by tests/bench/run-bench.sh (UML) and run-bench-vm.sh (qemu VMs).
# Source it after scripts/common.sh.

# bench_build_peer_bench: $BUILD/peer_bench and peer_flood against
# Debian's librdmacm
bench_build_peer_bench() {
	local prog

	log "building peer_bench and peer_flood against Debian's librdmacm"
	for prog in peer_bench peer_flood; do
		gcc -O2 -Wall -Wextra -Werror -o "$BUILD/$prog" \
			-I"$TOP/tests" "$TOP/tests/bench/$prog.c" -lrdmacm \
			-libverbs || die "$prog build"
	done
}

# bench_report <results dir> <platform> <tag>: bench-report.py on a run,
# with its date, commit and machine (<platform>: what ran the hosts); a
# run's summary (no BENCH_ONLY, or BENCH_ONLY=conn or hosts: those
# steps) is kept as tests/bench/results/<date>-<hhmm>-<tag>.md
bench_report() {
	local rc=0

	BENCH_DATE=$(date -u '+%Y-%m-%d %H:%M UTC') \
	BENCH_COMMIT=$(git -C "$TOP" describe --always --dirty 2>/dev/null || echo unknown) \
	BENCH_MACHINE="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $2" \
		python3 "$TOP/tests/bench/bench-report.py" "$1" || rc=1
	case "${BENCH_ONLY:-}" in "" | conn | hosts)
		[ -s "$1/summary.md" ] && cp "$1/summary.md" \
			"$TOP/tests/bench/results/$(date -u +%F-%H%M)-$3.md" ;;
	esac
	return $rc
}
