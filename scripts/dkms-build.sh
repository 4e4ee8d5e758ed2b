#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# DKMS build step (dkms.conf MAKE[0]): dkms-build.sh <kernelver> <kernel dir>
#
# The RDMA core includes private headers that linux-headers does not ship,
# so the sources come from Debian's linux-source-6.12, which must be the
# same upstream version as the target kernel:
#
#  1. unpack drivers/infiniband, include/rdma, include/uapi/rdma (and the
#     few other files the patches touch) from the source tarball;
#  2. apply patches/*.patch, but for their hunks to our own files, and
#     copy those in (drivers/...), as the series ends;
#  3. build drivers/infiniband/core with M= against the kernel's headers,
#     our patched include/ searched first (NOSTDINC_FLAGS) and
#     CONFIG_INFINIBAND_CM_PEER set, which the kernel's config lacks.
#     Keep the layout: the trace headers include themselves as
#     <../../drivers/infiniband/core/*_trace.h>, found below include/uapi.
#
# Runs in the DKMS build directory, a copy of /usr/src/cm-peer-<version>.
set -euo pipefail

kver=${1:?kernel release}
kdir=${2:-/lib/modules/$kver/build}
tarball=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
here=$(pwd)
work=$here/dkms-work

die() { printf 'cm-peer dkms: %s\n' "$*" >&2; exit 1; }

[ -f "$tarball" ] || die "$tarball missing: apt-get install linux-source-6.12"
[ -f "$kdir/Module.symvers" ] ||
	die "$kdir/Module.symvers missing: install linux-headers-$kver"

top=$(basename "$tarball" .tar.xz)	# its top directory: linux-source-6.12
src_ver=$(tar -xOf "$tarball" "$top/Makefile" |
	awk '/^VERSION =/{v=$3} /^PATCHLEVEL =/{p=$3} /^SUBLEVEL =/{s=$3}
	     END{print v "." p "." s}')
krel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' \
	"$kdir/include/generated/utsrelease.h")
case "$krel" in
"$src_ver"|"$src_ver"[+-]*) ;;
*) die "linux-source is $src_ver but the kernel is $krel: install the matching linux-source-6.12" ;;
esac

rm -rf "$work"
mkdir -p "$work"
# the three directories, and any other file a patch touches
mapfile -t members < <({
	printf '%s\n' drivers/infiniband include/rdma include/uapi/rdma
	sed -n 's|^diff --git a/\(.*\) b/.*|\1|p' patches/*.patch |
		grep -v -e '^drivers/infiniband/' -e '^include/rdma/' \
			-e '^include/uapi/rdma/'
} | sort -u)
tar -xf "$tarball" -C "$work" --strip-components=1 "${members[@]/#/$top/}"
# A patch's hunks to our own files (drivers/...) are in their copies
# already, which hold the files as the series ends: apply the others.
for p in patches/*.patch; do
	awk '/^diff --git a\// {
		f = substr($3, 3)
		skip = system("test -e \"" f "\"") == 0
	} !skip' "$p" >"$work/.patch"
	grep -q '^diff --git' "$work/.patch" || continue
	patch -s -p1 -d "$work" -i "$work/.patch" || die "patch failed: $p"
done
rm -f "$work/.patch"
cp -r drivers "$work/"

make -C "$kdir" M="$work/drivers/infiniband/core" \
	CONFIG_INFINIBAND_CM_PEER=y \
	NOSTDINC_FLAGS="-I$work/include -I$work/include/uapi -DCONFIG_INFINIBAND_CM_PEER=1" \
	KERNELRELEASE="$kver" -j"$(nproc)" modules
# dkms deletes the build directory afterwards; `make test` (dkms.sh check)
# asks for the CRCs to be kept for its ABI check.
if [ -n "${CM_PEER_KEEP_SYMVERS:-}" ]; then
	cp "$work/drivers/infiniband/core/Module.symvers" "$CM_PEER_KEEP_SYMVERS"
fi
