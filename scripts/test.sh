#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# `make test`: every test stage, then one tally over all of them.
#   1. KUnit suites in the UML kernel (KASAN, lockdep, kmemleak on), then
#      the user-space end-to-end test on two UML hosts (tests/e2e);
#   2. the host modules for Debian's kernel: build, ABI (CRCs) and vermagic,
#      `make install`/`uninstall` on a staged root with Debian's modules
#      (modprobe resolution, depmod and modversions checks), and the DKMS
#      package: dkms add/build/install/remove for Debian's kernel;
#   3. lint: checkpatch --strict, sparse, W=1/kernel-doc;
#   4. the upstream series (make series): checkpatch --strict per patch,
#      git am on the pristine tree, every patch builds;
#   5. Documentation/infiniband renders with the kernel's Sphinx build;
#   6. qemu, Debian's kernel (make vm): our modules from a staged
#      `make install`, loaded by modprobe on two SMP VMs next to the
#      in-tree ULPs, and the two-host e2e between them (vm-debian/...);
#   7. qemu, SMP debug kernel (make smp): KUnit suites and the device
#      suites on 2 vCPUs, kmemleak, the two-host e2e on two VMs (smp/...).
# A stage that fails does not stop the later ones; the exit status is
# non-zero when anything failed.
set -uo pipefail
. "$(dirname "$0")/common.sh"

RESULTS=$BUILD/results
mkdir -p "$RESULTS"
rm -f "$RESULTS"/checks-*.tsv
stage() {	# stage <name> <command...>
	local name=$1 start rc
	shift
	start=$(date +%s)
	"$@"
	rc=$?
	printf '%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - start))" \
		>>"$RESULTS/stages.tsv"
	return $rc
}
: >"$RESULTS/stages.tsv"

stage kunit "$TOP/scripts/run-kunit.sh"
if [ -x "$UML_OUT/linux" ]; then
	stage e2e "$TOP/tests/e2e/run-e2e.sh"
else
	printf 'e2e/uml_kernel_built\tFAIL\n' >"$RESULTS/checks-e2e.tsv"
fi

if stage host-build "$TOP/scripts/build-host.sh"; then
	stage abi "$TOP/scripts/abi-check.py" "$HOST_MOD/Module.symvers" \
		"$DEB_HDR/Module.symvers" "$KRELEASE" "$HOST_MOD"/*.ko \
		>"$RESULTS/checks-abi.tsv"
	stage abi-rds env ABI_PREFIX=abi/rds "$TOP/scripts/abi-check.py" \
		"$HOST_RDS/Module.symvers" "$DEB_HDR/Module.symvers" \
		"$KRELEASE" "$HOST_RDS"/*.ko >>"$RESULTS/checks-abi.tsv"
	cat "$RESULTS/checks-abi.tsv"
	stage install "$TOP/scripts/install-check.sh" \
		>"$RESULTS/checks-install.tsv"
	cat "$RESULTS/checks-install.tsv"
	stage lint "$TOP/scripts/lint.sh"
	stage vm "$TOP/tests/vm/run-vm.sh"
else
	printf 'host/build_modules\tFAIL\n' >"$RESULTS/checks-abi.tsv"
	printf 'vm-debian/host_modules_built\tFAIL\n' >"$RESULTS/checks-vm-debian.tsv"
fi
stage dkms "$TOP/scripts/dkms.sh" check >"$RESULTS/checks-dkms.tsv"
cat "$RESULTS/checks-dkms.tsv"
stage series "$TOP/scripts/series.sh" >"$RESULTS/checks-series.tsv"
cat "$RESULTS/checks-series.tsv"
stage docs "$TOP/scripts/docs.sh" >"$RESULTS/checks-docs.tsv"
cat "$RESULTS/checks-docs.tsv"
stage smp "$TOP/tests/vm/run-smp.sh"
# a qemu stage that ended before its first check still counts as failed
for q in vm-debian smp; do
	[ -s "$RESULTS/checks-$q.tsv" ] ||
		printf '%s/stage_ran\tFAIL\n' "$q" >>"$RESULTS/checks-$q.tsv"
done

echo
echo "stage timings (name, exit, seconds):"
sed 's/^/  /' "$RESULTS/stages.tsv"
echo
cat "$RESULTS"/checks.tsv "$RESULTS"/checks-*.tsv >"$RESULTS/all-checks.tsv" \
	2>/dev/null
jsons=()
for j in "$RESULTS"/kunit.json "$RESULTS"/kunit-*.json "$RESULTS"/smp/kunit-*.json; do
	[ -s "$j" ] && jsons+=("$j")
done
[ ${#jsons[@]} -gt 0 ] || { echo '{"name": "none"}' >"$RESULTS/kunit.json"; jsons=("$RESULTS/kunit.json"); }
python3 "$TOP/scripts/kunit-summary.py" "$RESULTS/all-checks.tsv" \
	"${jsons[@]}" >"$RESULTS/summary.txt"
rc=$?
cat "$RESULTS/summary.txt"
exit $rc
