#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Regenerate patches/*.patch from build/src after editing the patched
# kernel files there: each patch keeps its commit message and its list of
# files (read from the patch itself) and takes their content from the
# working tree.  A patch NNNN-*.patch may be created by hand with just a
# commit message and `diff --git a/F b/F` lines naming its files.
# The series is rebuilt on "base" in order, so each patch applies on the
# previous ones (git am on the pristine tree).
set -euo pipefail
. "$(dirname "$0")/common.sh"

cd "$SRC"
export GIT_AUTHOR_NAME="CM Peer Developers" GIT_AUTHOR_EMAIL="cm-peer@example.org"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME"
export GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
export GIT_AUTHOR_DATE="2026-12-02T12:00:00Z"
export GIT_COMMITTER_DATE="$GIT_AUTHOR_DATE"

parent=$(git rev-parse base)
idx=$(mktemp "$BUILD/index.XXXXXX")
msg=$(mktemp "$BUILD/msg.XXXXXX")
trap 'rm -f "$idx" "$msg"' EXIT
GIT_INDEX_FILE=$idx git read-tree base

for p in "$TOP"/patches/*.patch; do
	# message: Subject (without [PATCH ...]) and body up to the "---"
	awk '/^Subject: /{sub(/^Subject: (\[[^]]*\] )?/, ""); print; s=1; next}
	     s && /^---$/ {exit} s' "$p" >"$msg"
	mapfile -t files < <(sed -n 's|^diff --git a/\(.*\) b/.*|\1|p' "$p")
	GIT_INDEX_FILE=$idx git add -f -- "${files[@]}"
	tree=$(GIT_INDEX_FILE=$idx git write-tree)
	parent=$(git commit-tree "$tree" -p "$parent" -F "$msg")
done
rm -f "$TOP"/patches/*.patch
git format-patch -q --diff-algorithm=histogram --no-signature --zero-commit -o "$TOP/patches" \
	base.."$parent"
ls "$TOP/patches"
