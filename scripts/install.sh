#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# `make install` / `make uninstall` (as root).
#
#   install.sh install     copy the patched modules built by `make`
#                          (build/host-core, build/host-rds) to
#                          $DESTDIR/lib/modules/$KRELEASE/updates/cm-peer/
#                          and run depmod, so `modprobe rdma_ucm` loads
#                          ours instead of the in-tree ones (depmod ranks
#                          updates/ above kernel/);
#   install.sh uninstall   remove that directory and run depmod again:
#                          the in-tree modules, never touched, are used.
#
# Only the modules whose sources the series changes are installed; the
# in-tree ib_core, iw_cm, ib_uverbs and every other ULP stay and load
# next to them (same symbol CRCs, checked by `make abi`).  DESTDIR (default /)
# installs into a staged root, as scripts/install-check.sh does.
set -euo pipefail
. "$(dirname "$0")/common.sh"

MODULES=(ib_cm rdma_cm rdma_ucm)
RDS_MODULES=(rds rds_rdma)
DESTDIR=${DESTDIR:-}
moddir=$DESTDIR/lib/modules/$KRELEASE
dest=$moddir/updates/cm-peer

run_depmod() {
	if [ -f "$moddir/modules.order" ]; then
		depmod ${DESTDIR:+-b "$DESTDIR"} -a "$KRELEASE"
	else
		log "no $moddir/modules.order (kernel $KRELEASE not installed here): depmod skipped"
	fi
}

case "${1:-}" in
install)
	[ -n "$DESTDIR" ] || [ "$(id -u)" -eq 0 ] || die "make install needs root"
	[ -n "$DESTDIR" ] || [ -d "$moddir/kernel" ] ||
		die "kernel $KRELEASE is not installed here ($moddir/kernel missing)"
	want=$(modinfo -F vermagic "$HOST_MOD/ib_cm.ko" 2>/dev/null) ||
		die "no built modules in ${HOST_MOD#"$TOP"/}: run make first"
	case "$want" in
	"$KRELEASE "*) ;;
	*) die "ib_cm.ko vermagic '$want' is not for $KRELEASE" ;;
	esac
	install -d -m 755 "$dest"
	for m in "${MODULES[@]}"; do
		install -m 644 "$HOST_MOD/$m.ko" "$dest/$m.ko"
		echo "installed ${dest#"$DESTDIR"}/$m.ko"
	done
	for m in "${RDS_MODULES[@]}"; do
		[ -f "$HOST_RDS/$m.ko" ] || die "no $m.ko in ${HOST_RDS#"$TOP"/}: run make"
		install -m 644 "$HOST_RDS/$m.ko" "$dest/$m.ko"
		echo "installed ${dest#"$DESTDIR"}/$m.ko"
	done
	run_depmod
	;;
uninstall)
	[ -n "$DESTDIR" ] || [ "$(id -u)" -eq 0 ] || die "make uninstall needs root"
	if [ -d "$dest" ]; then
		rm -rf "$dest"
		echo "removed ${dest#"$DESTDIR"}"
		run_depmod
	else
		echo "nothing installed in ${dest#"$DESTDIR"}"
	fi
	;;
*)
	die "usage: $0 install|uninstall"
	;;
esac
