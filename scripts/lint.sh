#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Lint: checkpatch --strict on our sources and patches; sparse (C=2) and
# W=1 (which includes kernel-doc) on our objects, built in the host tree
# prepared by scripts/build-host.sh.  One line per check goes to
# build/results/checks-lint.tsv; exits 1 when any check fails.
set -uo pipefail
. "$(dirname "$0")/common.sh"

RESULTS=$BUILD/results
mkdir -p "$RESULTS"
out=$RESULTS/checks-lint.tsv
: >"$out"
fail=0
record() {	# record <name> <0|1>
	if [ "$2" -eq 0 ]; then
		printf '%s\tPASS\n' "$1" >>"$out"
	else
		printf '%s\tFAIL\n' "$1" >>"$out"
		fail=1
	fi
}

cd "$TOP" || exit 1
mapfile -t sources < <(git ls-files --cached --others --exclude-standard \
	-- 'drivers/*.[ch]' 'include/*.h')
mapfile -t user_sources < <(git ls-files --cached --others --exclude-standard \
	-- 'tests/*.c')
mapfile -t patches < <(ls patches/*.patch 2>/dev/null)
cp=(perl "$SRC/scripts/checkpatch.pl" --strict --no-tree --quiet
    --show-types)

log "checkpatch --strict on ${#sources[@]} source files"
rc=0
for f in "${sources[@]}" "${user_sources[@]}"; do
	"${cp[@]}" --file "$f" || rc=1
done
record lint/checkpatch_sources $rc

log "checkpatch --strict on ${#patches[@]} patches"
rc=0
for p in "${patches[@]}"; do
	# Run outside any git work tree: inside one, checkpatch takes a
	# tracked file name for a source file, not a patch.
	(cd "$BUILD" && perl "$SRC/scripts/checkpatch.pl" --strict --no-tree \
		--quiet --show-types "$TOP/$p") || rc=1
done
record lint/checkpatch_patches $rc

log "kernel-doc on ${#sources[@]} source files"
rc=0
out_kd=$(perl "$SRC/scripts/kernel-doc" -none -Wall "${sources[@]}" 2>&1) || rc=1
[ -z "$out_kd" ] || { echo "$out_kd"; rc=1; }
record lint/kernel_doc $rc

log "sparse (C=2) and W=1 on our objects"
objs=()
# Fault injection and the suites that use it are for test kernels only
# (the option is off in Debian's config, where its header turns the hooks
# into inline stubs): check them with the option defined on the command line.
fault_obj=()
for f in "${sources[@]}"; do
	case "$f" in
	drivers/infiniband/core/cm_peer_fault*.c | \
	drivers/infiniband/core/cm_peer_race_test.c | \
	drivers/infiniband/core/cm_peer_req_bench.c)
		fault_obj+=("$(basename "${f%.c}").o") ;;
	drivers/infiniband/core/*.c) objs+=("$(basename "${f%.c}").o") ;;
	esac
done
logf=$RESULTS/lint.sparse.log
make -C "$HOST_OUT" M="$HOST_MOD" KERNELRELEASE="$KRELEASE" C=2 W=1 \
	"${objs[@]}" >"$logf" 2>&1
rc=$?
if [ ${#fault_obj[@]} -gt 0 ]; then
	make -C "$HOST_OUT" M="$HOST_MOD" KERNELRELEASE="$KRELEASE" C=2 W=1 \
		KCFLAGS=-DCONFIG_INFINIBAND_CM_PEER_FAULT_INJECT=1 \
		"${fault_obj[@]}" >>"$logf" 2>&1 || rc=1
fi
if [ $rc -ne 0 ] || grep -E "(warning|error):" "$logf"; then
	cat "$logf"
	rc=1
fi
record lint/sparse_w1_kerneldoc $rc

# The kernel files our patches touch: sparse/W=1 must report nothing that
# the pristine file does not (both built the same way, messages compared
# without line numbers).
log "sparse (C=2) and W=1 on the patched kernel objects vs pristine"
base_mod=$BUILD/lint-base
rm -rf "$base_mod"
cp -a "$HOST_MOD" "$base_mod"
wired=()
for f in $(cd "$SRC" && git diff --name-only base HEAD -- \
		drivers/infiniband/core/); do
	case "$f" in
	*.c) ;;
	*) git -C "$SRC" show "base:$f" >"$base_mod/$(basename "$f")" 2>/dev/null
	   continue ;;
	esac
	git -C "$SRC" cat-file -e "base:$f" 2>/dev/null || continue
	git -C "$SRC" show "base:$f" >"$base_mod/$(basename "$f")"
	wired+=("$(basename "${f%.c}").o")
done
norm() { grep -E "(warning|error):" | sed -E 's|^.*/([^/]+):[0-9]+:[0-9]+:|\1:|' | sort -u; }
rc=0
if [ ${#wired[@]} -gt 0 ]; then
	make -C "$HOST_OUT" M="$HOST_MOD" KERNELRELEASE="$KRELEASE" C=2 W=1 \
		"${wired[@]}" >"$RESULTS/lint.wired.log" 2>&1 || rc=1
	make -C "$HOST_OUT" M="$base_mod" KERNELRELEASE="$KRELEASE" C=2 W=1 \
		"${wired[@]}" >"$RESULTS/lint.wired-base.log" 2>&1 || rc=1
	new=$(comm -23 <(norm <"$RESULTS/lint.wired.log") \
		       <(norm <"$RESULTS/lint.wired-base.log"))
	if [ -n "$new" ]; then
		echo "new warnings in patched files:"
		echo "$new"
		rc=1
	else
		echo "${wired[*]}: $(norm <"$RESULTS/lint.wired.log" | wc -l) warning(s), none new"
	fi
fi
record lint/sparse_w1_patched_no_new_warnings $rc

# struct rdma_id_private is rdma_cm's, but ib_core's restrack reaches its
# res by offset (container_of), and a distribution's ib_core loads beside
# our rdma_cm: every field of the pristine struct keeps its offset (the
# CRCs of the ABI check do not see this).
log "rdma_id_private: pristine fields keep their offsets"
rc=0
python3 - "$base_mod/cma.o" "$HOST_MOD/cma.o" <<'EOF' || rc=1
import re, subprocess, sys


def layout(obj):
    out = subprocess.run(["pahole", "-C", "rdma_id_private", obj],
                         capture_output=True, text=True, check=True).stdout
    return {m[1]: (int(m[2]), int(m[3] or 0)) for m in re.finditer(
        r"([\w\[\]]+)(?::\d+)?;\s*/\*\s*(\d+)(?::\s*(\d+))?", out)}


base, ours = layout(sys.argv[1]), layout(sys.argv[2])
moved = [f"{k} {base[k]} -> {ours.get(k)}" for k in base
         if ours.get(k) != base[k]]
print(f"{len(base)} pristine fields, {len(ours) - len(base)} added, "
      f"moved: {moved or 'none'}")
sys.exit(1 if moved or len(base) < 10 else 0)
EOF
record lint/rdma_id_private_layout_kept $rc

cat "$out"
exit $fail
