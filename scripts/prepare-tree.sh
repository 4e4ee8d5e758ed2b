#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Prepare $BUILD/src: Debian's linux-source-6.12 (pinned in kernel.env),
# unpacked once and committed as "base" in a private git repository, then
# overlaid with this project's files and patches:
#
#   drivers/, include/, Documentation/ -> same path in the tree
#   Kconfig                   -> drivers/infiniband/core/Kconfig
#   patches/*.patch           -> applied in order (git apply)
#
# The Debian source is tag "debian"; tag "base", what the series applies
# to, is "debian" plus the test kernel's fixes in tests/uml/*.patch
# (UML only, not part of the series: see tests/uml/README).
#
# The result is committed on top of "base" and checked out; git only
# rewrites files whose content changed, so incremental kernel builds stay
# incremental.  Build output never goes into the tree (O=/M= elsewhere).
set -euo pipefail
. "$(dirname "$0")/common.sh"

tarball=/usr/src/linux-source-6.12.tar.xz
stamp=$SRC/.peer-source-version
export GIT_AUTHOR_NAME=cm-peer GIT_AUTHOR_EMAIL=cm-peer@localhost
export GIT_COMMITTER_NAME=cm-peer GIT_COMMITTER_EMAIL=cm-peer@localhost
export GIT_AUTHOR_DATE="2000-01-01T00:00:00Z"
export GIT_COMMITTER_DATE="$GIT_AUTHOR_DATE"

if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$KPKG_VERSION" ]; then
	have=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || true)
	[ "$have" = "$KPKG_VERSION" ] ||
		die "linux-source-6.12 $KPKG_VERSION not installed (have '$have'); run scripts/install-deps.sh"
	log "unpacking $tarball ($KPKG_VERSION) into $SRC"
	rm -rf "$SRC" "$BUILD/src.tmp"
	mkdir -p "$BUILD/src.tmp"
	tar -xf "$tarball" -C "$BUILD/src.tmp" --strip-components=1
	(
		cd "$BUILD/src.tmp"
		git init -q
		git add -f -A
		git commit -q -m "Debian linux-source-6.12 $KPKG_VERSION"
		git tag debian
	)
	mv "$BUILD/src.tmp" "$SRC"
	echo "$KPKG_VERSION" >"$stamp"
fi

cd "$SRC"
# trees unpacked before tag "debian" existed: their base is Debian's
git rev-parse -q --verify debian >/dev/null || git tag debian base
index=$(mktemp "$BUILD/index.XXXXXX")
trap 'rm -f "$index"' EXIT
export GIT_INDEX_FILE=$index
shopt -s nullglob
apply_cached() {	# apply_cached <patch...>: into the index, in order
	local p
	for p; do
		git apply --cached --whitespace=nowarn "$p" ||
			die "patch does not apply: ${p#"$TOP"/}"
	done
}

git read-tree debian
apply_cached "$TOP"/tests/uml/*.patch
tree=$(git write-tree)
if [ "$(git rev-parse 'base^{tree}' 2>/dev/null)" != "$tree" ]; then
	git tag -f base "$(git commit-tree "$tree" -p debian \
		-m "test kernel fixes (tests/uml)")" >/dev/null
fi

git read-tree base
apply_cached "$TOP"/patches/*.patch

add() {		# add <repo file> <tree path>
	local blob
	blob=$(git hash-object -w "$1")
	git update-index --add --cacheinfo "100644,$blob,$2"
}
add "$TOP/Kconfig" drivers/infiniband/core/Kconfig
(cd "$TOP" && env -u GIT_INDEX_FILE git ls-files --cached --others \
	--exclude-standard -- drivers include Documentation) |
while read -r f; do
	if [ -f "$TOP/$f" ]; then
		add "$TOP/$f" "$f"
	fi
done

tree=$(git write-tree)
unset GIT_INDEX_FILE
commit=$(git commit-tree "$tree" -p base -m "cm-peer overlay")
git checkout -q -f --detach "$commit"
git clean -fdxq -e /.peer-source-version
log "tree ready: $SRC ($(git diff --shortstat base HEAD | sed 's/^ *//'))"
