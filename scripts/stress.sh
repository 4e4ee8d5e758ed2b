#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make stress: the UML test kernel (KASAN, lockdep, kmemleak) with the
# fault and fuzz suites run STRESS_ROUNDS times (default 5), the fuzzer at
# STRESS_FUZZ_CASES REQs per run (default 20000) from a random seed
# (STRESS_FUZZ_SEED=0; each run logs its seed), then the teardown stage
# and a kmemleak scan.  Results in build/results/stress/; prints
# "N passed, N failed" over the rounds and the run's own checks.
set -euo pipefail
. "$(dirname "$0")/common.sh"

rounds=${STRESS_ROUNDS:-5}
out=$BUILD/results/stress
mkdir -p "$out"
rm -f "$out"/ktap-*
start=$(date +%s)
set +e
RESULTS_DIR=$out BOOT_TIMEOUT=${STRESS_TIMEOUT:-3600} \
KUNIT_EXTRA_ARGS="cm_peer_ib_test.fuzz_cases=${STRESS_FUZZ_CASES:-20000} cm_peer_ib_test.fuzz_seed=${STRESS_FUZZ_SEED:-0} PEER_ROUNDS=$rounds" \
	"$TOP/scripts/run-kunit.sh" >"$out/run.log" 2>&1
rc=$?
set -e
grep -E '^(PASS|FAIL|SKIP) ' "$out/run.log" | grep -v '^PASS' || true
log "first round and checks: $(tail -1 "$out/run.log") (rc $rc)"
passed=0 failed=0
for f in "$out"/ktap-*.r*.txt; do
	[ -e "$f" ] || continue
	p=$(grep -cE '^ +ok [0-9]+ ' "$f" || true)
	n=$(grep -cE '^ +not ok [0-9]+ ' "$f" || true)
	passed=$((passed + p))
	failed=$((failed + n))
	[ "$n" -eq 0 ] || grep -E '^ +not ok|EXPECTATION|ASSERTION|seed' "$f" | head -20
done
grep -h '# peer_fuzz_req: \(seed\|sent\)' "$out"/ktap-cm_peer_fuzz*.txt || true
log "rounds 2..$rounds: $passed cases passed, $failed failed; $(($(date +%s) - start)) s"
first=$(tail -1 "$out/run.log")
p1=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' <<<"$first")
f1=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' <<<"$first")
echo "$((passed + ${p1:-0})) passed, $((failed + ${f1:-1})) failed"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
