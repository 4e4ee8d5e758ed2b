#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Prepare $BUILD/src: Debian's linux-source-6.12 (pinned in kernel.env),
# unpacked once and committed as "debian" in a private git repository,
# then the upstream series on top, one commit per patch (patches/series):
# the patch's hunks (git apply), the whole files of this repository it
# adds, its commit message.  Commit dates are fixed, so an unchanged
# series gives the same commits.
#
# Tag "base", what the series applies to, is "debian" plus the test
# kernel's fixes in tests/uml/*.patch (UML only, not part of the series:
# see tests/uml/README).
#
# The last commit is checked out; git only rewrites files whose content
# changed, so incremental kernel builds stay incremental.  Build output
# never goes into the tree (O=/M= elsewhere).
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
		git apply --cached --allow-empty --whitespace=nowarn "$p" ||
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

export GIT_AUTHOR_NAME="CM Peer Developers" GIT_AUTHOR_EMAIL=cm-peer@example.org
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
export GIT_AUTHOR_DATE="2026-12-02T12:00:00Z" GIT_COMMITTER_DATE="2026-12-02T12:00:00Z"
msg=$(mktemp "$BUILD/msg.XXXXXX")
trap 'rm -f "$index" "$msg"' EXIT
commit=$(git rev-parse base)
whole=()	# the whole files the series adds, checked against the repository
plist=()	# the patches, in order
declare -A added_by	# whole file -> index in plist of the patch adding it
while IFS= read -r line || [ -n "$line" ]; do
	case "$line" in
	"#"* | "") ;;
	[[:space:]]*)
		[ ${#plist[@]} -gt 0 ] || die "patches/series: $line before any patch"
		f=${line#"${line%%[![:space:]]*}"}
		[ -f "$TOP/$f" ] || die "patches/series: no file $f"
		added_by[$f]=$((${#plist[@]} - 1))
		whole+=("$f") ;;
	*)	plist+=("$TOP/patches/$line") ;;
	esac
done <"$TOP/patches/series"
scratch=$(mktemp "$BUILD/index.XXXXXX")
trap 'rm -f "$index" "$msg" "$scratch"' EXIT
# The repository holds a whole file as the series ends; the patch that
# adds it adds it without the hunks later patches make to it (git apply -R,
# newest first).
whole_blob() {	# whole_blob <file>: its blob as the patch adding it adds it
	local f=$1 i
	GIT_INDEX_FILE=$scratch git read-tree --empty
	GIT_INDEX_FILE=$scratch git update-index --add --cacheinfo \
		"100644,$(git hash-object -w "$TOP/$f"),$f"
	for ((i = ${#plist[@]} - 1; i > ${added_by[$f]}; i--)); do
		GIT_INDEX_FILE=$scratch git apply --cached -R --allow-empty \
			--include="$f" "${plist[i]}" ||
			die "cannot undo ${plist[i]#"$TOP"/} on $f"
	done
	GIT_INDEX_FILE=$scratch git ls-files -s -- "$f" | cut -d' ' -f2
}
add() {		# add <file>: a whole file of this repository, at the same path
	local blob

	blob=$(whole_blob "$1") || exit 1
	git update-index --add --cacheinfo "100644,$blob,$1"
}
commit_patch() {	# commit_patch <patch>: its message on the index's tree
	"$TOP/scripts/patch-msg.sh" "$1" >"$msg"
	commit=$(git commit-tree "$(git write-tree)" -p "$commit" -F "$msg")
}
# The last series made is tag "series": commits or edits in build/src
# past it are a developer's, for refresh-patches.sh, not to be reset.
if git rev-parse -q --verify series >/dev/null &&
   { [ "$(git rev-parse HEAD)" != "$(git rev-parse series)" ] ||
     ! env -u GIT_INDEX_FILE git diff --quiet HEAD; }; then
	die "build/src has changes patches/ does not: run scripts/refresh-patches.sh, or drop them (git -C build/src checkout -f series)"
fi
git read-tree base
patch=
while IFS= read -r line || [ -n "$line" ]; do
	case "$line" in
	"#"* | "") continue ;;
	[[:space:]]*)	# a whole file of the patch above
		add "${line#"${line%%[![:space:]]*}"}"
		continue ;;
	esac
	[ -z "$patch" ] || commit_patch "$patch"
	patch=$TOP/patches/$line
	apply_cached "$patch"
done <"$TOP/patches/series"
[ -z "$patch" ] || commit_patch "$patch"
extra=$(cd "$TOP" && env -u GIT_INDEX_FILE git ls-files --cached --others \
	--exclude-standard -- drivers include Documentation |
	grep -vxF -f <(printf '%s\n' "${whole[@]}") || true)
[ -z "$extra" ] || die "in no patch of patches/series: $extra"

unset GIT_INDEX_FILE
git tag -f series "$commit" >/dev/null
git checkout -q -f --detach "$commit"
git clean -fdxq -e /.peer-source-version
log "tree ready: $SRC ($(git rev-list --count base..HEAD) patches," \
	"$(git diff --shortstat base HEAD | sed 's/^ *//'))"
