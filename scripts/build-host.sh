#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The main job: build the patched RDMA core modules (ib_core, ib_cm,
# iw_cm, rdma_cm, ib_uverbs, rdma_ucm, ...) for Debian's 6.12 amd64 kernel.
#
#  1. build/host: O= tree of build/src with Debian's config (linux-config-6.12)
#     plus CONFIG_INFINIBAND_CM_PEER=y, `modules_prepare`d with the Debian
#     release string so vermagic matches, and Debian's Module.symvers
#     (linux-headers-$KRELEASE) so modversions CRCs are resolved;
#  2. build/host-core: M= build of a copy of drivers/infiniband/core;
#  3. build/host-rds: M= build of a copy of net/rds (rds.ko and rds_rdma.ko;
#     rds_rdma takes the peer model), against host-core's Module.symvers.
set -euo pipefail
. "$(dirname "$0")/common.sh"

config_xz=/usr/src/linux-config-6.12/config.$KFLAVOUR.xz
[ -f "$config_xz" ] || die "missing $config_xz; run scripts/install-deps.sh"
[ -f "$DEB_HDR/Module.symvers" ] || die "missing $DEB_HDR/Module.symvers"

mkdir -p "$HOST_OUT" "$HOST_MOD" "$HOST_RDS"
kmake() { make -s -C "$SRC" O="$HOST_OUT" KERNELRELEASE="$KRELEASE" "$@"; }

# Regenerate the config only when its inputs change, so reruns stay
# incremental.
want=$(
	xz -dc "$config_xz"
	cat "$SRC/drivers/infiniband/core/Kconfig" "$0"
) 
want_sum=$(printf '%s' "$want" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$HOST_OUT/.peer-config-sum" 2>/dev/null)" != "$want_sum" ]; then
	log "configuring $HOST_OUT from Debian's $KFLAVOUR config"
	xz -dc "$config_xz" >"$HOST_OUT/.config"
	# Debian's signing keys are not in the source package; the modules
	# are built unsigned (as any out-of-tree module), which changes no
	# symbol CRC and no vermagic.
	"$SRC/scripts/config" --file "$HOST_OUT/.config" \
		--enable INFINIBAND_CM_PEER \
		--disable INFINIBAND_CM_PEER_KUNIT_TEST \
		--set-str SYSTEM_TRUSTED_KEYS "" \
		--set-str SYSTEM_REVOCATION_KEYS "" \
		--disable MODULE_SIG_ALL \
		--set-str MODULE_SIG_KEY "" \
		--set-str BUILD_SALT "$KRELEASE"
	kmake olddefconfig
	grep -q '^CONFIG_INFINIBAND_CM_PEER=y' "$HOST_OUT/.config" ||
		die "CONFIG_INFINIBAND_CM_PEER did not stick"
	echo "$want_sum" >"$HOST_OUT/.peer-config-sum"
fi

log "modules_prepare ($KRELEASE)"
kmake -j"$JOBS" modules_prepare
cp "$DEB_HDR/Module.symvers" "$HOST_OUT/Module.symvers"

# Copy the prepared sources; rsync keeps mtimes, so unchanged files are
# not rebuilt.  Build products in the copy are left alone.
rsync -a --delete \
	--exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' --exclude='*.mod' \
	--exclude='*.mod.c' --exclude='Module.symvers' --exclude='modules.order' \
	--exclude='.*.d' --exclude='*.a' \
	"$SRC/drivers/infiniband/core/" "$HOST_MOD/"

log "building drivers/infiniband/core against it (M=)"
make -s -C "$HOST_OUT" M="$HOST_MOD" KERNELRELEASE="$KRELEASE" \
	-j"$JOBS" ${EXTRA_MAKEFLAGS:-} modules

log "building net/rds against it and host-core's symbols (M=)"
rsync -a --delete \
	--exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' --exclude='*.mod' \
	--exclude='*.mod.c' --exclude='Module.symvers' --exclude='modules.order' \
	--exclude='.*.d' --exclude='*.a' \
	"$SRC/net/rds/" "$HOST_RDS/"
make -s -C "$HOST_OUT" M="$HOST_RDS" KERNELRELEASE="$KRELEASE" \
	KBUILD_EXTRA_SYMBOLS="$HOST_MOD/Module.symvers" \
	CONFIG_RDS=m CONFIG_RDS_RDMA=m CONFIG_RDS_TCP=n \
	-j"$JOBS" ${EXTRA_MAKEFLAGS:-} modules

echo "modules for $KRELEASE in ${HOST_MOD#"$TOP"/} and ${HOST_RDS#"$TOP"/}:"
for ko in "$HOST_MOD"/*.ko "$HOST_RDS"/*.ko; do
	printf '  %-14s vermagic: %s\n' "$(basename "$ko")" \
		"$(modinfo -F vermagic "$ko")"
done
