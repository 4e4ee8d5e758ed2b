#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Install (apt) everything the build, the tests and the lint need.
# Idempotent: does nothing when every package is already present.
set -euo pipefail
. "$(dirname "$0")/common.sh"

pkgs=(
	"linux-source-6.12=$KPKG_VERSION"
	"linux-config-6.12=$KPKG_VERSION"
	"linux-headers-$KRELEASE=$KPKG_VERSION"
	bc bison flex libelf-dev libssl-dev dwarves kmod cpio rsync xz-utils
	sparse python3 perl git make gcc iproute2
	# user-space end-to-end test: stock librdmacm/libibverbs, rxe provider
	librdmacm-dev libibverbs-dev rdma-core ibverbs-providers rdmacm-utils
	iputils-ping
	# packaging (make dkms, make test's DKMS check) and the docs build
	dkms patch python3-sphinx python3-sphinx-rtd-theme
	# make bench's plot
	gnuplot-nox
	# make vm / make smp (tests/vm): qemu (TCG), the Debian VMs' initramfs
	qemu-system-x86 busybox-static
)

missing=()
for p in "${pkgs[@]}"; do
	name=${p%%=*}
	want=${p#*=}
	have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
	case "$have" in
	"install ok installed "*)
		[ "$want" = "$p" ] || [ "${have##* }" = "$want" ] || missing+=("$p")
		;;
	*)
		missing+=("$p")
		;;
	esac
done

if [ ${#missing[@]} -eq 0 ]; then
	log "build dependencies present"
	exit 0
fi

[ "$(id -u)" -eq 0 ] || die "need root to install: ${missing[*]}"
log "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
