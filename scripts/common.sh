# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# Shared settings for the project's scripts.  Source it, don't run it.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../kernel.env
. "$TOP/kernel.env"

BUILD=${BUILD:-$TOP/build}
SRC=$BUILD/src			# pristine Debian source + our overlay (git)
UML_OUT=$BUILD/uml		# kunit.py --build_dir (cached)
HOST_OUT=$BUILD/host		# O= tree for Debian's amd64 config
HOST_MOD=$BUILD/host-core	# M= copy of drivers/infiniband/core
HOST_RDS=$BUILD/host-rds	# M= copy of net/rds (rds, rds_rdma)
DEB_HDR=/usr/src/linux-headers-$KRELEASE
JOBS=${JOBS:-$(nproc)}

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
