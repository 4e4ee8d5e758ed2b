#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build the SMP debug kernel for qemu (x86_64): `make tinyconfig`, then
# the fragments (default tests/vm/smp.config; later ones override earlier
# ones) merged onto it, olddefconfig, and a check that every option of
# the fragments ended up as written (else: error, with the list).  O= tree
# in SMP_OUT (default build/smp), cached: the configuration is made again
# only when a fragment, Kconfig or this script changes; the build is
# incremental.  Kernel builds are serialised on build/.kbuild.lock.
#
#   tests/vm/build-smp.sh [fragment...]
# SMP_CONFIG_ONLY=1: configure (and check) only.
set -euo pipefail
. "$(dirname "$0")/../../scripts/common.sh"

# absolute paths: make runs in the source tree, merge_config.sh in SMP_OUT
SMP_OUT=$(realpath -m "${SMP_OUT:-$BUILD/smp}")
frags=()
for f in "${@:-$TOP/tests/vm/smp.config}"; do
	[ -f "$f" ] || die "no config fragment $f"
	frags+=("$(realpath "$f")")
done
kmake() { make -s -C "$SRC" O="$SMP_OUT" ARCH=x86_64 "$@"; }

[ -f "$SRC/Makefile" ] || die "no kernel tree in $SRC: run make tree"
mkdir -p "$SMP_OUT"
sum=$(cat "${frags[@]}" "$SRC/drivers/infiniband/core/Kconfig" "$0" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$SMP_OUT/.peer-config-sum" 2>/dev/null)" != "$sum" ] ||
   [ ! -f "$SMP_OUT/.config" ]; then
	log "configuring ${SMP_OUT#"$TOP"/}: tinyconfig + ${frags[*]#"$TOP"/}"
	rm -f "$SMP_OUT/.peer-config-sum"
	kmake tinyconfig >/dev/null
	(cd "$SMP_OUT" && "$SRC/scripts/kconfig/merge_config.sh" -m -O . \
		.config "${frags[@]}") >"$SMP_OUT/merge.log" 2>&1 ||
		{ cat "$SMP_OUT/merge.log" >&2; die "merge_config.sh failed"; }
	kmake olddefconfig >/dev/null
	# every option as the fragments say (the last assignment wins)
	bad=$(cat "${frags[@]}" | sed -n \
		-e 's/^\(CONFIG_[A-Za-z0-9_]*\)=\(.*\)$/\1 \2/p' \
		-e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1 n/p' |
		awk '{ want[$1] = $2 } END { for (k in want) print k, want[k] }' |
		while read -r opt val; do
			if [ "$val" = n ]; then
				! grep -q "^$opt=" "$SMP_OUT/.config" ||
					echo "$opt: want n, have $(grep "^$opt=" "$SMP_OUT/.config")"
			else
				grep -qx "$opt=$val" "$SMP_OUT/.config" ||
					echo "$opt: want $val, have $(grep "^$opt=\|^# $opt is not set" "$SMP_OUT/.config" || echo unset)"
			fi
		done)
	[ -z "$bad" ] || {
		printf '  %s\n' "$bad" >&2
		die "the kernel config does not have these fragment options (missing dependency?)"
	}
	echo "$sum" >"$SMP_OUT/.peer-config-sum"
fi
[ -z "${SMP_CONFIG_ONLY:-}" ] || exit 0

log "building ${SMP_OUT#"$TOP"/}/arch/x86/boot/bzImage (waits for build/.kbuild.lock)"
mkdir -p "$BUILD"
flock "$BUILD/.kbuild.lock" make -s -C "$SRC" O="$SMP_OUT" ARCH=x86_64 \
	-j"$JOBS" bzImage
log "built $(cat "$SMP_OUT/include/config/kernel.release")"
