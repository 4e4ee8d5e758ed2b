#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RDS/IB over soft-RoCE between two qemu VMs (Debian's kernel, SMP, TCG,
# our RDMA core modules staged as by tests/vm/run-vm.sh):
# tests/rds/rds-init.sh on each, results and consoles in
# build/results/rds/, a report by tests/rds/rds-report.py.
#
# RDS_MODES ("stock peer mixed": Debian's rds and rds_rdma on both hosts,
# the series' on both, the series' on one), RDS_CONNS (sizes, "16 64"),
# RDS_REPEAT (runs of each, 3), RDS_ROUNDS (1 + reconnects of all, 3),
# RDS_MSGS (messages per connection and round, 8).
set -uo pipefail
. "$(dirname "$0")/../../scripts/common.sh"
. "$TOP/tests/vm/vm-lib.sh"

R=$BUILD/results/rds
vm_debian_ready "$R"
"$TOP/tests/e2e/build-tools.sh" || die "building the test programs failed"

log "RDS/IB on two Debian $KRELEASE VMs ($VM_CPUS vCPUs each, TCG)"
vm_pair "$R" "${RDS_TIMEOUT:-3600}" "$VM_STAGE/boot/vmlinuz-$KRELEASE" \
	"$VM_INITRD" "console=ttyS0 rdinit=/init panic=-1 PEER_INIT=$TOP/tests/rds/rds-init.sh PEER_ROOTFLAGS=$VM_ROOTFLAGS PEER_STAGE=$VM_STAGE PEER_BIN=$BUILD/peer_ping PEER_BARRIER_TRIES=3000 PEER_RDS_MODES=$(echo "${RDS_MODES:-stock peer mixed}" | tr ' ' ,) PEER_RDS_CONNS=$(echo "${RDS_CONNS:-16 64}" | tr ' ' ,) PEER_RDS_REPEAT=${RDS_REPEAT:-3} PEER_RDS_ROUNDS=${RDS_ROUNDS:-3} PEER_RDS_MSGS=${RDS_MSGS:-8}"
python3 "$TOP/tests/rds/rds-report.py" "$R"
