#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# `make bench`: the benchmarks, separate from the tests.
#
#  1. builds the benchmark UML kernel (tests/bench/bench.kunitconfig: no
#     KASAN/lockdep/kmemleak, with the cm_p2p_bench suite) in
#     build/uml-bench;
#  2. hot path: runs the cm_p2p_bench KUnit suite (REQ decision cost);
#  3. connections: boots two UML hosts over a vector link with soft-RoCE
#     (as the e2e test) running tests/bench/uml-bench-init.sh: single-pair
#     peer / client-server / workaround rounds, then storms;
#  4. tests/bench/bench-report.py: build/results/bench/{bench.json,
#     latency.csv, latency.png, summary.md}, printed at the end.
#
# BENCH_ROUNDS (default 200), BENCH_STORM (default "4 8 16 32") and
# BENCH_DELAY_US (netem delay on each host's link, default 0) tune it.
set -uo pipefail
. "$(dirname "$0")/../../scripts/common.sh"

B=$BUILD/results/bench
BENCH_OUT=$BUILD/uml-bench
rm -rf "$B"
mkdir -p "$B/a" "$B/b" "$B/sync"

log "building the benchmark UML kernel in ${BENCH_OUT#"$TOP"/}"
(cd "$SRC" && python3 tools/testing/kunit/kunit.py build \
	--build_dir="$BENCH_OUT" --kunitconfig="$TOP/tests/bench/bench.kunitconfig" \
	--jobs="$JOBS") >"$B/build.log" 2>&1 || {
	tail -30 "$B/build.log"
	die "benchmark kernel build failed"
}

log "hot path: KUnit suite cm_p2p_bench"
(cd "$SRC" && python3 tools/testing/kunit/kunit.py exec \
	--build_dir="$BENCH_OUT" --raw_output=all --timeout=900 \
	'cm_p2p_bench') >"$B/kunit.log" 2>&1
echo $? >"$B/kunit.rc"
grep -o 'bench: .*' "$B/kunit.log" >"$B/hotpath.txt"

log "building p2p_bench against Debian's librdmacm"
gcc -O2 -Wall -Wextra -Werror -o "$BUILD/p2p_bench" \
	"$TOP/tests/bench/p2p_bench.c" -lrdmacm -libverbs || die "p2p_bench build"

p1=$((20000 + RANDOM % 20000))
p2=$((p1 + 1))
boot() {	# boot <name> <ip> <peer ip> <src port> <dst port>
	timeout --kill-after=15 "${BENCH_TIMEOUT:-1500}" "$BENCH_OUT/linux" \
		mem=1G console=tty kunit.enable=0 \
		rootfstype=hostfs rootflags=/ rw \
		ib_cm.p2p_rdv_max_held="${BENCH_MAX_HELD:-4096}" \
		init="$TOP/tests/bench/uml-bench-init.sh" \
		P2P_NAME="$1" P2P_IP="$2" P2P_PEER="$3" P2P_OUT="$B/$1" \
		P2P_SYNC="$B/sync" P2P_BIN="$BUILD/p2p_bench" \
		BENCH_ROUNDS="${BENCH_ROUNDS:-200}" \
		BENCH_STORM="$(echo "${BENCH_STORM:-4 8 16 32}" | tr ' ' ,)" \
		BENCH_DELAY_US="${BENCH_DELAY_US:-0}" \
		"vec0:transport=l2tpv3,udp=1,src=127.0.0.1,dst=127.0.0.1,srcport=$4,dstport=$5,depth=128,rx_session=0xffff,tx_session=0xffff" \
		</dev/null >"$B/$1.console" 2>&1
	echo $? >"$B/$1.exit"
}

log "connection benchmarks on two UML hosts"
start=$(date +%s)
boot a 198.18.0.1 198.18.0.2 "$p1" "$p2" &
boot b 198.18.0.2 198.18.0.1 "$p2" "$p1" &
wait
stty sane 2>/dev/null || true
log "hosts done after $(($(date +%s) - start)) s"

python3 "$TOP/tests/bench/bench-report.py" "$B"
