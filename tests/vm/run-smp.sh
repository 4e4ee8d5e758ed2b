#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# `make smp`: the SMP debug kernel in qemu (TCG, $VM_CPUS vCPUs).
#
#  1. tests/vm/build-smp.sh: tinyconfig + tests/vm/smp.config (SMP,
#     virtio, 9p, rxe, our options and KUnit suites, KASAN, lockdep,
#     kmemleak, debug objects, hung-task detector) in build/smp, cached;
#  2. one VM: the built-in KUnit suites run at boot (console parsed with
#     kunit.py), then tests/vm/smp-init.sh runs the device suites of
#     tests/kunit/dev-suites.txt on rxe0 over a veth through debugfs, and
#     collects a kmemleak report;
#  3. two VMs of the same kernel, the two-host e2e scenarios of tests/e2e
#     (tests/vm/vm-e2e-init.sh) over a virtio-net link;
#  4. checks smp/... in build/results/checks-smp.tsv, KUnit results
#     (names smp/<suite>/<case>) in build/results/smp/kunit-*.json; any
#     kernel splat on a console (tests/vm/splat.re) fails.  Consoles and
#     logs in build/results/smp/.
# SMP_FRAGMENTS (fragments for build-smp.sh), SMP_OUT (build dir), SMP_NAME
# (results folder and check prefix, default smp), SMP_KUNIT=0 (no KUnit
# VM), SMP_E2E=0 (no e2e VMs), SMP_KUNIT_ARGS (more kernel command line
# for the KUnit VM), SMP_DEV_SUITES (a file of device suites instead of
# tests/kunit/dev-suites.txt), SMP_E2E_ARGS (the e2e timing,
# tests/e2e/scenarios.sh)
# serve other configurations and reruns (make stress-kcsan).
set -uo pipefail
. "$(dirname "$0")/../../scripts/common.sh"
. "$TOP/tests/vm/vm-lib.sh"

NAME=${SMP_NAME:-smp}
VM_MACHINE=q35		# see tests/vm/vm-lib.sh
SMP_OUT=${SMP_OUT:-$BUILD/smp}
read -r -a FRAGMENTS <<<"${SMP_FRAGMENTS:-$TOP/tests/vm/smp.config}"
RESULTS=$BUILD/results
OUT=$RESULTS/$NAME
CHECKS=$RESULTS/checks-$NAME.tsv
DEV_SUITES_FILE=${SMP_DEV_SUITES:-$TOP/tests/kunit/dev-suites.txt}
mapfile -t DEV_SUITES < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$DEV_SUITES_FILE")
rm -rf "$OUT"
mkdir -p "$OUT/kunit"
: >"$CHECKS"
rc=0
check() {	# check <name> <command...>
	if "${@:2}"; then
		printf '%s/%s\tPASS\n' "$NAME" "$1" >>"$CHECKS"
	else
		printf '%s/%s\tFAIL\n' "$NAME" "$1" >>"$CHECKS"
		rc=1
	fi
}

fail_setup() {	# fail_setup <check> <message>: one failing check, exit 1
	check "$1" false
	printf 'error: %s\n' "$2" >&2
	cat "$CHECKS"
	exit 1
}
command -v "$QEMU" >/dev/null ||
	fail_setup qemu_installed "no $QEMU: run scripts/install-deps.sh"
start=$(date +%s)
SMP_OUT=$SMP_OUT "$TOP/tests/vm/build-smp.sh" "${FRAGMENTS[@]}" \
	>"$OUT/build.log" 2>&1 || {
	tail -30 "$OUT/build.log" >&2
	fail_setup kernel_built "the SMP kernel did not build (log: ${OUT#"$TOP"/}/build.log)"
}
log "kernel ready in $(($(date +%s) - start)) s ($(cat "$SMP_OUT/include/config/kernel.release"))"
KERNEL=$SMP_OUT/arch/x86/boot/bzImage
CMDLINE="console=ttyS0 root=hostroot rootfstype=9p rootflags=$VM_ROOTFLAGS ro panic=-1 kasan.fault=report"
"$TOP/tests/e2e/build-tools.sh" ||
	fail_setup peer_ping_built "e2e programs build"

# --- 2. KUnit: built-in suites at boot, device suites on rxe0, kmemleak
if [ "${SMP_KUNIT:-1}" != 0 ]; then
log "booting the SMP debug kernel ($VM_CPUS vCPUs): KUnit, device suites on rxe0, kmemleak"
start=$(date +%s)
vm_boot kunit "$OUT" "${SMP_TIMEOUT:-1800}" "$KERNEL" - \
	"$CMDLINE init=$TOP/tests/vm/smp-init.sh PEER_SHARE=$OUT PEER_OUT=$OUT/kunit PEER_DEV_SUITES=$DEV_SUITES_FILE PEER_LINKDEL_ROUNDS=${SMP_LINKDEL_ROUNDS:-1} ${SMP_KUNIT_ARGS:-}"
log "VM exited with $(cat "$OUT/kunit.exit") after $(($(date +%s) - start)) s"

# kunit.py parse, names prefixed with $NAME/ (apart from the UML ones)
kparse() {	# kparse <ktap/console file> <json>
	(cd "$SRC" && python3 tools/testing/kunit/kunit.py parse \
		--json="$2" "$1") >"${2%.json}.parse.log" 2>&1
	[ -s "$2" ] || echo '{"name": "none"}' >"$2"
	python3 - "$2" "$NAME" <<'PY'
import json, sys
path, prefix = sys.argv[1], sys.argv[2]
with open(path) as f:
    root = json.load(f)
for sub in root.get("sub_groups", []):
    sub["name"] = f"{prefix}/{sub['name']}"
root["test_cases"] = [dict(c, name=f"{prefix}/{c['name']}")
                      for c in root.get("test_cases", [])]
with open(path, "w") as f:
    json.dump(root, f, indent=1)
PY
	python3 "$TOP/scripts/kunit-logs.py" "$2" "$1"
}
kparse "$OUT/kunit.console" "$OUT/kunit-boot.json"
grep -E '^\[[0-9:]+\] (Testing complete|Ran |=+ \[?(PASSED|FAILED)|\[(FAILED|CRASHED)\])' \
	"$OUT/kunit-boot.parse.log" || tail -5 "$OUT/kunit-boot.parse.log"
for s in "${DEV_SUITES[@]}"; do
	[ -s "$OUT/kunit/ktap-$s.txt" ] || continue
	kparse "$OUT/kunit/ktap-$s.txt" "$OUT/kunit-$s.json"
	echo "$s: $(grep -h "Testing complete" "$OUT/kunit-$s.parse.log" || echo "no results")"
done

boot_suites_ran() {	# at least one case ran at boot
	python3 - "$OUT/kunit-boot.json" <<'PY'
import json, sys
def n(node):
    return len(node.get("test_cases", [])) + sum(n(s) for s in node.get("sub_groups", []))
with open(sys.argv[1]) as f:
    sys.exit(0 if n(json.load(f)) > 0 else 1)
PY
}
dev_suite_ran() {	# ran on the device: results, nothing skipped
	local f=$OUT/kunit/ktap-$1.txt
	[ -s "$f" ] && grep -q "^ok 1 $1\$\|^not ok 1 $1\$" "$f" &&
		! grep -q "# SKIP" "$f"
}
no_leak() {
	[ "$(cat "$OUT/kunit/kmemleak.status" 2>/dev/null)" = done ] || {
		echo "kmemleak: no report collected" >&2
		return 1
	}
	if grep -q "unreferenced object" "$OUT/kunit/kmemleak.txt"; then
		echo "kmemleak: $(grep -c "unreferenced object" "$OUT/kunit/kmemleak.txt") leaks, first ones:" >&2
		head -40 "$OUT/kunit/kmemleak.txt" >&2
		return 1
	fi
}
# device removal (tests/kunit/linkdel.sh): every `rdma link delete`
# returned 0 in time; no REQ stayed held once its peers were gone
linkdel_ok() {
	local f=$OUT/kunit/linkdel.tsv
	echo "linkdel (round, held, rc): $(tr '\n' ';' <"$f" 2>/dev/null)" >&2
	[ -s "$f" ] || return 1
	awk '$3 != 0 || $2 != 0 { bad = 1 } END { exit bad }' "$f"
}
check kunit_boot_suites_ran boot_suites_ran
for s in "${DEV_SUITES[@]}"; do
	check "suite_ran_on_rxe0/$s" dev_suite_ran "$s"
done
check teardown_link_delete_during_hold linkdel_ok
check kunit_vm_no_kernel_splat vm_splats "$OUT/kunit.console"
check kunit_vm_kmemleak_clean no_leak
check kunit_vm_clean_poweroff test "$(cat "$OUT/kunit.exit")" = 0
fi

# --- 3. two-host e2e on two VMs of this kernel
if [ "${SMP_E2E:-1}" != 0 ]; then
	log "booting two SMP debug VMs a and b for the two-host e2e"
	vm_pair "$OUT/e2e" "${SMP_E2E_TIMEOUT:-1500}" "$KERNEL" - \
		"$CMDLINE kunit.enable=0 init=$TOP/tests/vm/vm-e2e-init.sh PEER_BIN=$BUILD/peer_ping PEER_BARRIER_TRIES=3000 ${SMP_E2E_ARGS:-PEER_MARGIN_MS=10000 PEER_EARLY_MS=1500 PEER_IDLE_MS=30000 PEER_COLLIDE_DELAY_MS=250 PEER_ROUND_MS=40000 PEER_RANK_TIMEOUT_MS=25000}"
	python3 "$TOP/tests/e2e/check-e2e.py" "$OUT/e2e" --prefix "$NAME/e2e" \
		--splats "$TOP/tests/vm/splat.re" >>"$CHECKS" || rc=1
	cat "$OUT/e2e/report.txt"
	for h in a b; do
		vm_splats "$OUT/e2e/$h.console" || true
	done
fi
cat "$CHECKS"
echo "$(grep -c '	PASS$' "$CHECKS") passed, $(grep -c '	FAIL$' "$CHECKS") failed"
exit $rc
