#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Would `make install` + `modprobe rdma_ucm` work on a Debian host?  This
# machine runs no Debian kernel, so the check runs on a staged root:
#
#  1. Debian's linux-image-$KRELEASE-unsigned (the same modules as the
#     signed image) is unpacked into build/stage;
#  2. `make install DESTDIR=build/stage` puts ours in updates/cm-peer and
#     runs depmod there; `make uninstall` is checked at the end;
#  3. checks: modprobe resolves rdma_ucm and the in-tree ULPs that use the
#     CM (ib_ipoib, ib_srp, ib_iser, nvme-rdma, rpcrdma, ...) to our
#     ib_cm/rdma_cm/rdma_ucm; vermagic equals that of Debian's modules;
#     every CRC a staged module imports matches its exporter (ours or
#     Debian's), i.e. the kernel's modversions check would pass.
#
# Prints "name<TAB>PASS|FAIL" lines; exit 1 when one fails.
set -uo pipefail
. "$(dirname "$0")/common.sh"

pkg=linux-image-$KRELEASE-unsigned
deb=/var/cache/apt/archives/${pkg}_${KPKG_VERSION}_amd64.deb
stage=$BUILD/stage
rc=0
check() {	# check <name> <command...>
	if "${@:2}"; then
		printf 'install/%s\tPASS\n' "$1"
	else
		printf 'install/%s\tFAIL\n' "$1"
		rc=1
	fi
}

if [ ! -f "$deb" ]; then
	log "downloading $pkg $KPKG_VERSION"
	(cd /var/cache/apt/archives && apt-get download -q "$pkg=$KPKG_VERSION") >&2 ||
		die "cannot download $pkg=$KPKG_VERSION"
fi
rm -rf "$stage"
mkdir -p "$stage"
dpkg-deb -x "$deb" "$stage" || die "cannot unpack $deb"
moddir=$stage/lib/modules/$KRELEASE
depmod -b "$stage" -a "$KRELEASE"

install_ok() {
	DESTDIR=$stage "$TOP/scripts/install.sh" install >&2 &&
		[ -f "$moddir/updates/cm-peer/rdma_ucm.ko" ]
}
check make_install install_ok

# modprobe picks ours for the CM modules, Debian's for the rest.
resolves() {	# resolves <module>
	local deps bad=0 m
	deps=$(modprobe -d "$stage" -S "$KRELEASE" --show-depends "$1") || return 1
	for m in ib_cm rdma_cm rdma_ucm rds rds_rdma; do
		if grep -q "/$m\.ko" <<<"$deps" &&
		   ! grep -q "updates/cm-peer/$m\.ko" <<<"$deps"; then
			echo "$1 resolves to the in-tree $m" >&2
			bad=1
		fi
	done
	grep -q 'updates/cm-peer/ib_cm\.ko' <<<"$deps" || bad=1
	return $bad
}
for m in rdma_ucm ib_ipoib ib_srp ib_isert nvme_rdma rpcrdma rds_rdma; do
	check "modprobe_${m}_uses_ours" resolves "$m"
done

same_vermagic() {
	local theirs ours m
	theirs=$(modinfo -F vermagic "$moddir/kernel/drivers/infiniband/core/ib_cm.ko.xz") ||
		return 1
	for m in ib_cm rdma_cm rdma_ucm; do
		ours=$(modinfo -F vermagic "$moddir/updates/cm-peer/$m.ko") || return 1
		[ "$ours" = "$theirs" ] || {
			echo "$m vermagic '$ours' != Debian's '$theirs'" >&2
			return 1
		}
	done
}
check vermagic_equals_debian same_vermagic

# depmod -e -E: every symbol a module needs is exported, with the same CRC.
depmod_clean() {
	local out
	out=$(depmod -b "$stage" -a -e -E "$DEB_HDR/Module.symvers" \
		"$KRELEASE" 2>&1) || return 1
	[ -z "$out" ] || { echo "$out" >&2; return 1; }
}
check depmod_symbols_and_crcs depmod_clean

# The same, done here: ULP imports of CM symbols against our exports and
# our imports against Debian's exporters.  The self-test changes one CRC
# and must see a mismatch, so this check can fail.
check modversions_match python3 "$TOP/scripts/modversions-check.py" \
	"$moddir" "$DEB_HDR/Module.symvers" "$HOST_MOD/Module.symvers"

uninstall_ok() {
	DESTDIR=$stage "$TOP/scripts/install.sh" uninstall >&2 &&
		[ ! -e "$moddir/updates/cm-peer" ] &&
		modprobe -d "$stage" -S "$KRELEASE" --show-depends rdma_ucm |
		grep -q 'kernel/drivers/infiniband/core/rdma_ucm\.ko'
}
check make_uninstall_restores_in_tree uninstall_ok

rm -rf "$stage"
exit $rc
