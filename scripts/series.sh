#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# `make series`: the upstream series, as `git format-patch` output
# against the pinned tree, in build/series (with a cover letter).
#
#  1. the prepared tree's commits base..HEAD are the series
#     (scripts/prepare-tree.sh, from patches/series), exported with git
#     format-patch; the cover letter from patches/cover-letter;
#  2. checks: every patch is checkpatch --strict clean; the series applies
#     with `git am` on a pristine checkout of Debian's tree (tag "debian")
#     and, with the UML test kernel's fixes (tests/uml, UML only) on
#     top, ends at exactly the prepared tree; every patch builds
#     drivers/infiniband/core for Debian's kernel (its linux-headers),
#     with CONFIG_INFINIBAND_CM_PEER=y and =n, with no warning
#     (bisectable).
#
# Prints "name<TAB>PASS|FAIL" lines; exit 1 when one fails.
set -uo pipefail
. "$(dirname "$0")/common.sh"

out=$BUILD/series
wt=$BUILD/am-check
logs=$BUILD/series-logs
rc=0
result() {	# result <name> <ok>
	printf 'series/%s\t%s\n' "$1" "$([ "$2" = 1 ] && echo PASS || echo FAIL)"
	[ "$2" = 1 ] || rc=1
}

rm -rf "$out" "$logs"
mkdir -p "$out" "$logs"
if ! git -C "$SRC" format-patch -q --diff-algorithm=histogram \
	--no-signature --zero-commit --cover-letter -o "$out" base..HEAD; then
	result format_patch 0
	exit 1
fi
cover=$out/0000-cover-letter.patch
subject=$(head -n 1 "$TOP/patches/cover-letter")
awk -v subj="$subject" -v blurb="$TOP/patches/cover-letter" '
	/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subj) }
	/\*\*\* BLURB HERE \*\*\*/ {
		getline l < blurb	# the subject line, then a blank one
		getline l < blurb
		while ((getline l < blurb) > 0)
			print l
		next
	}
	{ print }' "$cover" >"$cover.new" && mv "$cover.new" "$cover"
log "series: $(ls "$out" | wc -l) files in ${out#"$TOP"/}"

mapfile -t patches < <(ls "$out"/[0-9]*.patch | grep -v '/0000-cover-letter\.patch$')
bad=()
for p in "${patches[@]}"; do
	(cd "$BUILD" && "$SRC/scripts/checkpatch.pl" --strict -q "$p") \
		>"$logs/$(basename "$p" .patch).checkpatch" 2>&1 ||
		bad+=("$(basename "$p")")
done
for b in "${bad[@]}"; do
	log "checkpatch: $b"
	cat "$logs/${b%.patch}.checkpatch" >&2
done
result checkpatch_strict_every_patch "$([ ${#bad[@]} -eq 0 ] && echo 1)"

git -C "$SRC" worktree remove --force "$wt" >/dev/null 2>&1
rm -rf "$wt"
git -C "$SRC" worktree prune
ok=0
# the test kernel's fixes (debian..base, made by prepare-tree.sh) on top
# of the series' result, in an index of its own: the tree it gives
with_uml_fixes() {
	local idx=$logs/am-check.index
	GIT_INDEX_FILE=$idx git -C "$wt" read-tree HEAD &&
	git -C "$wt" diff --binary debian base |
		GIT_INDEX_FILE=$idx git -C "$wt" apply --cached --allow-empty &&
	GIT_INDEX_FILE=$idx git -C "$wt" write-tree
	rm -f "$idx"
}
if git -C "$SRC" worktree add -q --detach "$wt" debian >/dev/null 2>&1 &&
   (cd "$wt" && git -c user.name=am-check -c user.email=am-check@localhost \
	am -q "${patches[@]}") >"$logs/git-am.log" 2>&1; then
	if [ "$(with_uml_fixes)" = "$(git -C "$SRC" rev-parse 'HEAD^{tree}')" ]; then
		ok=1
		log "series: git am on Debian's tree (+ tests/uml) gives the prepared tree"
	else
		log "series: git am result differs from the prepared tree"
	fi
else
	cat "$logs/git-am.log" >&2
fi
result git_am_on_pristine_tree $ok

# Bisectability: build drivers/infiniband/core at every patch against
# Debian's linux-headers, with that patch's include/rdma and
# include/uapi/rdma searched first: with CONFIG_INFINIBAND_CM_PEER set (as
# DKMS does) and as Debian's config has it (unset).  The tree layout
# matters: cm_trace.h includes itself as
# <../../drivers/infiniband/core/cm_trace.h>, which the compiler finds
# below <tree>/include/uapi.
if [ $ok = 1 ]; then
	ok=1
	okw=1
	# sparse (C=1) and W=1 messages without line numbers; the pristine
	# tree's (n = 0) are allowed, any other fails the patch
	norm() { grep -E "(warning|error):" | sed -E 's|^.*/([^/]+):[0-9]+:[0-9]+:|\1:|' | sort -u; }
	# build_at <tree> <n> <commit> <make args...>: patch n's core in <tree>
	build_at() {
		local bis=$1 n=$2 c=$3 core=$1/drivers/infiniband/core blog new
		shift 3
		mkdir -p "$core" "$bis/include"
		rm -rf "$bis/tmp"
		mkdir -p "$bis/tmp"
		git -C "$wt" archive "$c" drivers/infiniband/core include/rdma \
			include/uapi/rdma | tar -x -C "$bis/tmp"
		# no -t: a changed file gets a new mtime and is rebuilt (git
		# archive stamps every file with the commit's date)
		rsync -rlpD -c --delete --exclude='*.o' --exclude='*.ko' \
			--exclude='.*.cmd' --exclude='*.mod' --exclude='*.mod.c' \
			--exclude='Module.symvers' --exclude='modules.order' \
			--exclude='.*.d' --exclude='*.a' \
			"$bis/tmp/drivers/infiniband/core/" "$core/"
		rsync -rlpD -c --delete "$bis/tmp/include/" "$bis/include/"
		blog=$logs/build-$(basename "$bis")-$(printf %04d "$n").log
		if ! make -s -C "$DEB_HDR" M="$core" "$@" \
			W=1 C=1 -j"$JOBS" modules >"$blog" 2>&1; then
			log "series: patch $n does not build ($(basename "$bis"))"
			tail -n 30 "$blog" >&2
			ok=0
		elif [ "$n" = 0 ]; then
			norm <"$blog" >"$bis.warnings"
		else
			new=$(norm <"$blog" | comm -23 - "$bis.warnings")
			if [ -n "$new" ]; then
				log "series: patch $n adds W=1/sparse warnings ($(basename "$bis"))"
				echo "$new" >&2
				okw=0
			fi
		fi
	}
	n=0
	for c in debian $(git -C "$wt" rev-list --reverse debian..HEAD); do
		bis=$BUILD/bisect
		build_at "$bis" $n "$c" CONFIG_INFINIBAND_CM_PEER=y \
			NOSTDINC_FLAGS="-I$bis/include -I$bis/include/uapi -DCONFIG_INFINIBAND_CM_PEER=1"
		bis=$BUILD/bisect-peer-n
		build_at "$bis" $n "$c" \
			NOSTDINC_FLAGS="-I$bis/include -I$bis/include/uapi"
		n=$((n + 1))
	done
	n=$((n - 1))
	log "series: built drivers/infiniband/core at each of $n patches, CONFIG_INFINIBAND_CM_PEER=y and =n"
	result every_patch_builds $ok
	result every_patch_no_new_w1_sparse_warning $okw
fi

git -C "$SRC" worktree remove --force "$wt" >/dev/null 2>&1
rm -rf "$wt"
exit $rc
