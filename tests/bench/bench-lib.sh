# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Shared by tests/bench/run-bench.sh (UML) and run-bench-vm.sh (qemu VMs).
# Source it after scripts/common.sh.

# bench_build_peer_bench: $BUILD/peer_bench against Debian's librdmacm
bench_build_peer_bench() {
	log "building peer_bench against Debian's librdmacm"
	gcc -O2 -Wall -Wextra -Werror -o "$BUILD/peer_bench" \
		-I"$TOP/tests" "$TOP/tests/bench/peer_bench.c" -lrdmacm -libverbs ||
		die "peer_bench build"
}

# bench_report <results dir> <platform>: bench-report.py on a run, with
# its date, commit and machine (<platform>: what ran the hosts)
bench_report() {
	BENCH_DATE=$(date -u '+%Y-%m-%d %H:%M UTC') \
	BENCH_COMMIT=$(git -C "$TOP" describe --always --dirty 2>/dev/null || echo unknown) \
	BENCH_MACHINE="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $2" \
		python3 "$TOP/tests/bench/bench-report.py" "$1"
}
