#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# `make series`: copy patches/*.patch (a `git format-patch` series against
# the pinned tree) to build/series and check that it applies with `git am`
# on a pristine checkout of that tree.  Prints one "name<TAB>PASS|FAIL"
# line (for the tally) and exits 1 when the series does not apply.
set -uo pipefail
. "$(dirname "$0")/common.sh"

out=$BUILD/series
wt=$BUILD/am-check
rm -rf "$out"
mkdir -p "$out"
cp "$TOP"/patches/*.patch "$out/"

git -C "$SRC" worktree remove --force "$wt" >/dev/null 2>&1
rm -rf "$wt"
git -C "$SRC" worktree prune
rc=0
if git -C "$SRC" worktree add -q --detach "$wt" base >/dev/null 2>&1 &&
   (cd "$wt" && git -c user.name=am-check -c user.email=am-check@localhost \
	am -q "$out"/*.patch) >"$BUILD/series.log" 2>&1; then
	log "series: $(ls "$out" | wc -l) patches apply with git am on base"
else
	rc=1
	cat "$BUILD/series.log" >&2
fi
git -C "$SRC" worktree remove --force "$wt" >/dev/null 2>&1
rm -rf "$wt"
printf 'series/git_am_on_pristine_tree\t%s\n' "$([ $rc -eq 0 ] && echo PASS || echo FAIL)"
exit $rc
