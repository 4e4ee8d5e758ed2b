#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Write patches/ back from build/src after its commits were edited there
# (git rebase -i base, git commit --amend, ...): for each commit
# base..HEAD, its message and its hunks become patches/NNNN-<subject>.patch,
# and the files it adds (files "base" lacks) are whole files of this
# repository: listed under it in patches/series and copied back here as
# HEAD has them.  A later commit's change to a whole file stays a hunk of
# its patch (prepare-tree.sh undoes such hunks to get the file as the
# adding patch adds it).
set -euo pipefail
. "$(dirname "$0")/common.sh"

cd "$SRC"
tmp=$(mktemp -d "$BUILD/refresh.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
is_whole() {	# is_whole <path>: a file the series adds, not the kernel's
	! git cat-file -e "base:$1" 2>/dev/null
}

sed -n '/^#/p' "$TOP/patches/series" >"$tmp/series"
echo >>"$tmp/series"
n=0
for c in $(git rev-list --reverse base..HEAD); do
	n=$((n + 1))
	added=()
	exclude=()
	while read -r st f; do
		is_whole "$f" || continue
		[ "$st" != D ] || die "$(git log -1 --format=%s "$c") deletes whole file $f"
		[ "$st" = A ] || continue	# a hunk of this patch
		added+=("$f")
		exclude+=(":(exclude)$f")
		mkdir -p "$(dirname "$TOP/$f")"
		git show "HEAD:$f" >"$TOP/$f"
	done < <(git diff-tree --no-commit-id --name-status -r "$c")
	fp=(git format-patch -1 --start-number "$n" --diff-algorithm=histogram
	    --no-signature --zero-commit)
	if git diff --quiet "$c^" "$c" -- . "${exclude[@]}"; then
		# whole files only: format-patch would take an older commit
		p=$("${fp[@]}" -o "$tmp/msg" "$c")
		sed '/^---$/q' "$p" >"$tmp/$(basename "$p")"
		p=$tmp/$(basename "$p")
	else
		p=$("${fp[@]}" -o "$tmp" "$c" -- . "${exclude[@]}")
	fi
	echo "$(basename "$p")" >>"$tmp/series"
	[ ${#added[@]} -eq 0 ] || printf '\t%s\n' "${added[@]}" >>"$tmp/series"
done
rm -f "$TOP"/patches/[0-9]*.patch
mv "$tmp"/[0-9]*.patch "$TOP/patches/"
mv "$tmp/series" "$TOP/patches/series"
git tag -f series HEAD >/dev/null	# prepare-tree.sh: nothing left to keep
ls "$TOP/patches"
