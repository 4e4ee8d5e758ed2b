#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# `make vm`: our modules on Debian's own kernel, SMP, in qemu (TCG).
#
#  1. build/vm/debian: Debian's linux-image-$KRELEASE-unsigned unpacked,
#     plus `make install DESTDIR=` of build/host-core (updates/cm-peer,
#     depmod); build/vm/initramfs.cpio.gz mounts the host's / over 9p;
#  2. two VMs, a and b, Debian's vmlinuz, $VM_CPUS vCPUs each, joined by a
#     virtio-net link (qemu UDP socket); on each (tests/vm/vm-e2e-init.sh):
#     modprobe rdma_rxe rdma_ucm, checks that ib_cm/rdma_cm/rdma_ucm are
#     ours (updates/cm-peer, build ID of the running module), that the
#     in-tree ULPs load beside them and use them; the two-host e2e
#     scenarios of tests/e2e over rxe, and RDS/IB with Debian's rds_rdma
#     (tests/rds/rds-scenario.sh); then both swap to the series'
#     modules built with CONFIG_INFINIBAND_CM_PEER=n (build/peer-n):
#     rping client/server works, the peer option is refused; the modules
#     unload at the end;
#  3. tests/e2e/check-e2e.py and tests/rds/rds-report.py: checks
#     vm-debian/... in build/results/checks-vm-debian.tsv; any kernel
#     splat on a console (tests/vm/splat.re) fails.  Consoles and logs:
#     build/results/vm-debian/.
set -uo pipefail
. "$(dirname "$0")/../../scripts/common.sh"
. "$TOP/tests/vm/vm-lib.sh"

RESULTS=$BUILD/results
OUT=$RESULTS/vm-debian
CHECKS=$RESULTS/checks-vm-debian.tsv
rm -rf "$OUT"
mkdir -p "$OUT" "$VM_DIR"
: >"$CHECKS"
fail_setup() {	# fail_setup <check> <message>: one failing check, exit 1
	printf 'vm-debian/%s\tFAIL\n' "$1" >>"$CHECKS"
	printf 'error: %s\n' "$2" >&2
	cat "$CHECKS"
	exit 1
}

command -v "$QEMU" >/dev/null || fail_setup qemu_installed \
	"no $QEMU: run scripts/install-deps.sh"
want=$(modinfo -F vermagic "$HOST_MOD/ib_cm.ko" 2>/dev/null)
case "$want" in
"$KRELEASE "*) ;;
*) fail_setup host_modules_built "no modules for $KRELEASE in ${HOST_MOD#"$TOP"/}: run make first" ;;
esac
"$TOP/tests/e2e/build-tools.sh" ||
	fail_setup peer_ping_built "e2e programs build"
# The series' ib_cm, rdma_cm and rdma_ucm with CONFIG_INFINIBAND_CM_PEER
# unset, as Debian's config has it: an M= build against its headers (as
# DKMS builds), cached by the tree's hash.
PEER_N=$BUILD/peer-n
tree=$(git -C "$SRC" rev-parse 'HEAD^{tree}')
if [ "$(cat "$PEER_N/.tree" 2>/dev/null)" != "$tree" ]; then
	log "building the modules with CONFIG_INFINIBAND_CM_PEER=n"
	rm -rf "$PEER_N"
	mkdir -p "$PEER_N"
	git -C "$SRC" archive HEAD drivers/infiniband/core include/rdma \
		include/uapi/rdma | tar -x -C "$PEER_N"
	make -C "$DEB_HDR" M="$PEER_N/drivers/infiniband/core" \
		NOSTDINC_FLAGS="-I$PEER_N/include -I$PEER_N/include/uapi" \
		KERNELRELEASE="$KRELEASE" -j"$JOBS" modules \
		>"$OUT/peer-n-build.log" 2>&1 && echo "$tree" >"$PEER_N/.tree" || {
		tail -30 "$OUT/peer-n-build.log" >&2
		fail_setup peer_n_modules_built "CONFIG_INFINIBAND_CM_PEER=n build failed"
	}
fi
# ...export exactly Debian's symbols, with Debian's CRCs
python3 "$TOP/scripts/abi-check.py" "$PEER_N/drivers/infiniband/core/Module.symvers" \
	"$DEB_HDR/Module.symvers" "$KRELEASE" "$PEER_N"/drivers/infiniband/core/*.ko \
	>"$OUT/peer-n-abi.log" 2>&1
sed -n 's|^abi/\([^\t]*\)\t|vm-debian/peer_n_\1\t|p' "$OUT/peer-n-abi.log" >>"$CHECKS"
if grep -q "0 new$" "$OUT/peer-n-abi.log"; then
	printf 'vm-debian/peer_n_no_new_export\tPASS\n' >>"$CHECKS"
else
	printf 'vm-debian/peer_n_no_new_export\tFAIL\n' >>"$CHECKS"
	grep '^abi:' "$OUT/peer-n-abi.log" >&2
fi
( vm_debian_stage && vm_initramfs ) >"$OUT/stage.log" 2>&1 || {
	cat "$OUT/stage.log" >&2
	fail_setup staged_root "staging Debian's kernel with our modules failed"
}

log "booting Debian $KRELEASE VMs a and b ($VM_CPUS vCPUs each, TCG)"
vm_pair "$OUT" "${VM_TIMEOUT:-900}" "$VM_STAGE/boot/vmlinuz-$KRELEASE" \
	"$VM_INITRD" "console=ttyS0 rdinit=/init panic=-1 PEER_INIT=$TOP/tests/vm/vm-e2e-init.sh PEER_ROOTFLAGS=$VM_ROOTFLAGS PEER_STAGE=$VM_STAGE PEER_BIN=$BUILD/peer_ping PEER_MODS_N=$PEER_N/drivers/infiniband/core PEER_BARRIER_TRIES=3000 PEER_COLLIDE_DELAY_MS=250 PEER_ROUND_MS=20000 PEER_RANK_TIMEOUT_MS=12000"

python3 "$TOP/tests/e2e/check-e2e.py" "$OUT" --prefix vm-debian \
	--splats "$TOP/tests/vm/splat.re" --no-kmemleak --modules >>"$CHECKS"
rc=$?
python3 "$TOP/tests/rds/rds-report.py" "$OUT" >"$OUT/rds-report.txt" || rc=1
sed 's|^|vm-debian/|' "$OUT/checks.tsv" >>"$CHECKS"
cat "$OUT/report.txt"
for h in a b; do
	vm_splats "$OUT/$h.console" || true
	grep -q "Run /init\|switch_root" "$OUT/$h.console" ||
		{ echo "VM $h console (last lines):"; tail -20 "$OUT/$h.console"; } >&2
done
cat "$CHECKS"
echo "$(grep -c '	PASS$' "$CHECKS") passed, $(grep -c '	FAIL$' "$CHECKS") failed"
exit $rc
