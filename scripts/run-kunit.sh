#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build the UML KUnit kernel (tests/kunit/peer.kunitconfig, cached in
# build/uml) and run it.  The kernel is booted by hand rather than by
# `kunit.py run` so that, after the built-in suites, it continues to a
# hostfs init (tests/kunit/uml-init.sh) that collects a kmemleak report.
# kunit.py then parses the log.  Results go to build/results/.
set -euo pipefail
. "$(dirname "$0")/common.sh"

KUNITCONFIG=$TOP/tests/kunit/peer.kunitconfig
RESULTS=${RESULTS_DIR:-$BUILD/results}
# more kernel command line (scripts/stress.sh: fuzz cases, rounds)
read -r -a EXTRA_ARGS <<<"${KUNIT_EXTRA_ARGS:-}"
SUITES=(cm_peer_arbiter cm_peer_index)
# Suites that need an RDMA device: skipped at boot, run again by
# uml-init.sh through debugfs once rxe0 exists (results in ktap-<suite>.txt)
mapfile -t DEV_SUITES <"$TOP/tests/kunit/dev-suites.txt"
BOOT_TIMEOUT=${BOOT_TIMEOUT:-900}

mkdir -p "$UML_OUT" "$RESULTS"
rm -f "$RESULTS"/kunit.* "$RESULTS"/kmemleak.* "$RESULTS"/checks.tsv \
	"$RESULTS"/ktap-* "$RESULTS"/ib-* "$RESULTS"/td*

log "building UML KUnit kernel in ${UML_OUT#"$TOP"/}"
start=$(date +%s)
(cd "$SRC" && python3 tools/testing/kunit/kunit.py build \
	--build_dir="$UML_OUT" --kunitconfig="$KUNITCONFIG" \
	--jobs="$JOBS") >"$RESULTS/kunit.build.log" 2>&1 || {
	tail -50 "$RESULTS/kunit.build.log"
	die "UML kernel build failed (log: $RESULTS/kunit.build.log)"
}
log "built in $(($(date +%s) - start)) s"

# the first user-space step, before the long boot
. "$TOP/tests/uml-pair.sh"
uml_userspace_check "$UML_OUT/linux" "$RESULTS" || {
	printf 'uml/userspace_runs\tFAIL\n' >"$RESULTS/checks.tsv"
	die "UML user space does not run: no KUnit boot"
}
printf 'uml/userspace_runs\tPASS\n' >"$RESULTS/checks.tsv"

# the librdmacm program of the teardown stage (tests/kunit/uml-init.sh)
"$TOP/tests/e2e/build-tools.sh" || die "e2e programs build"

log "booting UML (KUnit suites, teardown of librdmacm users, kmemleak scan)"
start=$(date +%s)
set +e
timeout --kill-after=15 "$BOOT_TIMEOUT" "$UML_OUT/linux" mem=1G \
	console=tty rootfstype=hostfs rootflags=/ rw \
	init="$TOP/tests/kunit/uml-init.sh" PEER_OUT="$RESULTS" \
	PEER_BIN="$BUILD/peer_ping" cm_peer_ib_test.race_rounds=50 \
	"${EXTRA_ARGS[@]}" \
	kasan.fault=report </dev/null >"$RESULTS/kunit.log" 2>&1
rc=$?
set -e
stty sane 2>/dev/null || true
log "UML exited with $rc after $(($(date +%s) - start)) s"

(cd "$SRC" && python3 tools/testing/kunit/kunit.py parse \
	--json="$RESULTS/kunit.json" "$RESULTS/kunit.log") \
	>"$RESULTS/kunit.parse.log" 2>&1 || true
[ -s "$RESULTS/kunit.json" ] &&
	python3 "$TOP/scripts/kunit-logs.py" "$RESULTS/kunit.json" "$RESULTS/kunit.log"
cat "$RESULTS/kunit.parse.log"
jsons=("$RESULTS/kunit.json")
for s in "${DEV_SUITES[@]}"; do
	[ -s "$RESULTS/ktap-$s.txt" ] || continue
	(cd "$SRC" && python3 tools/testing/kunit/kunit.py parse \
		--json="$RESULTS/kunit-$s.json" "$RESULTS/ktap-$s.txt") \
		>"$RESULTS/kunit-$s.parse.log" 2>&1 || true
	[ -s "$RESULTS/kunit-$s.json" ] && python3 "$TOP/scripts/kunit-logs.py" \
		"$RESULTS/kunit-$s.json" "$RESULTS/ktap-$s.txt"
	cat "$RESULTS/kunit-$s.parse.log"
	jsons+=("$RESULTS/kunit-$s.json")
done

check() {	# check <name> <command...>: one line of checks.tsv
	local name=$1
	shift
	if "$@"; then
		printf '%s\tPASS\n' "$name" >>"$RESULTS/checks.tsv"
	else
		printf '%s\tFAIL\n' "$name" >>"$RESULTS/checks.tsv"
	fi
}

suite_ran() { grep -q "^[[:space:]]*# Subtest: $1\$" "$RESULTS/kunit.log"; }
no_kernel_bug() {
	! grep -E "BUG: KASAN|WARNING: .*lock|possible recursive locking|possible circular locking|inconsistent lock state|BUG: sleeping function|Kernel panic|Call Trace|blocked for more than" \
		"$RESULTS/kunit.log"
}
no_leak() {
	[ "$(cat "$RESULTS/kmemleak.status" 2>/dev/null)" = done ] || {
		echo "kmemleak: no report collected" >&2
		return 1
	}
	if grep -q "unreferenced object" "$RESULTS/kmemleak.txt"; then
		echo "kmemleak: $(grep -c "unreferenced object" "$RESULTS/kmemleak.txt") leaks, first ones:" >&2
		head -40 "$RESULTS/kmemleak.txt" >&2
		return 1
	fi
}

dev_suite_ran() {	# ran on the device: results, nothing skipped
	[ -s "$RESULTS/ktap-$1.txt" ] &&
		grep -q "^ok 1 $1\$\|^not ok 1 $1\$" "$RESULTS/ktap-$1.txt" &&
		! grep -q "# SKIP" "$RESULTS/ktap-$1.txt"
}
for s in "${SUITES[@]}"; do
	check "uml/suite_ran/$s" suite_ran "$s"
done
for s in "${DEV_SUITES[@]}"; do
	check "uml/suite_ran_on_rxe0/$s" dev_suite_ran "$s"
done
# teardown stage: lb exits on its own (exit 1: a failure reported), not
# by the 40 s watchdog (137); la is killed on purpose (137)
td_rc() { cat "$RESULTS/td-$1.rc" 2>/dev/null || echo none; }
td_kill_ok() {
	local ok=0
	[ "$(td_rc kill-la)" = 137 ] && [ "$(td_rc kill-lb)" = 1 ] &&
		[ "$(cat "$RESULTS/td-kill.held" 2>/dev/null || echo 0)" -gt 0 ] ||
		ok=1
	echo "td-kill: held $(cat "$RESULTS/td-kill.held" 2>/dev/null)," \
		"la rc $(td_rc kill-la), lb rc $(td_rc kill-lb)," \
		"lb: $(tail -1 "$RESULTS/td-kill-lb.log" 2>/dev/null)" >&2
	return $ok
}
# device removal (tests/kunit/linkdel.sh): every `rdma link delete`
# returned 0 in time; no REQ stayed held once its peers were gone
td_linkdel_ok() {
	local f=$RESULTS/linkdel.tsv
	echo "linkdel (round, held, rc): $(tr '\n' ';' <"$f" 2>/dev/null)" >&2
	[ -s "$f" ] || return 1
	awk '$3 != 0 || $2 != 0 { bad = 1 } END { exit bad }' "$f"
}
check "uml/teardown_kill_during_hold" td_kill_ok
check "uml/teardown_link_delete_during_hold" td_linkdel_ok
check "uml/no_kasan_lockdep_report" no_kernel_bug
check "uml/kmemleak_clean" no_leak
check "uml/clean_poweroff (exit $rc)" test "$rc" -eq 0

for j in "${jsons[@]}"; do
	[ -s "$j" ] || echo '{"name": "none"}' >"$j"
done
python3 "$TOP/scripts/kunit-summary.py" "$RESULTS/checks.tsv" \
	"${jsons[@]}" | tee "$RESULTS/kunit.summary"
