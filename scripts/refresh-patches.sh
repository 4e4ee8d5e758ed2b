#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Write patches/ back from build/src after its commits were edited there
# (git rebase -i base, git commit --amend, ...): for each commit
# base..HEAD, its message and its hunks to the files the kernel already
# has become patches/NNNN-<subject>.patch, and the files it adds that are
# whole files of this repository are listed under it in patches/series
# (and copied back here).  A whole file that a later commit changes is an
# error: fold the change into the commit that adds it.
set -euo pipefail
. "$(dirname "$0")/common.sh"

cd "$SRC"
tmp=$(mktemp -d "$BUILD/refresh.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mapfile -t whole < <(sed -n 's/^[[:space:]]\{1,\}//p' "$TOP/patches/series")
is_whole() {	# is_whole <path>: listed, or a file of this repository
	printf '%s\n' "${whole[@]}" | grep -qxF "$1" || [ -e "$TOP/$1" ]
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
		[ "$st" = A ] || die "$(git log -1 --format=%s "$c") changes whole file $f"
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
