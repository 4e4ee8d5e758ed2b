#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The storms of `make bench` on the qemu VM stage: two VMs (Debian's
# kernel, SMP, TCG) with our modules staged as by tests/vm/run-vm.sh,
# joined by a virtio-net link, soft-RoCE on each; PID 1 is
# tests/bench/uml-bench-init.sh (it knows a VM by PEER_STAGE), storms
# and floods only (BENCH_ONLY=conn, no single-pair rounds unless
# BENCH_ROUNDS says).
# Results and report in build/results/bench-vm/ (as build/results/bench/).
#
# BENCH_RANKS, BENCH_REPEAT, BENCH_ROUNDS (default 0 here), BENCH_STORM_ARGS,
# BENCH_FLOOD, BENCH_LIBRDMACM as for tests/bench/run-bench.sh; VM_CPUS
# (default 2) vCPUs per VM.
set -uo pipefail
. "$(dirname "$0")/../../scripts/common.sh"
. "$TOP/tests/vm/vm-lib.sh"
. "$TOP/tests/bench/bench-lib.sh"

B=$BUILD/results/bench-vm
vm_debian_ready "$B"
bench_build_peer_bench
RDMACM_DESC="the host's librdmacm"
if [ -n "${BENCH_LIBRDMACM:-}" ]; then
	[ -f "$BENCH_LIBRDMACM/librdmacm.so.1" ] ||
		die "BENCH_LIBRDMACM: no librdmacm.so.1 in $BENCH_LIBRDMACM"
	RDMACM_DESC="librdmacm of ${BENCH_LIBRDMACM#"$TOP"/}"
fi

log "storms on two Debian $KRELEASE VMs ($VM_CPUS vCPUs each, TCG)"
vm_pair "$B" "${BENCH_TIMEOUT:-5400}" "$VM_STAGE/boot/vmlinuz-$KRELEASE" \
	"$VM_INITRD" "console=ttyS0 rdinit=/init panic=-1 PEER_INIT=$TOP/tests/bench/uml-bench-init.sh PEER_ROOTFLAGS=$VM_ROOTFLAGS PEER_STAGE=$VM_STAGE PEER_BIN=$BUILD/peer_bench PEER_LIB=${BENCH_LIBRDMACM:-} PEER_BARRIER_TRIES=3000 BENCH_ONLY=conn BENCH_ROUNDS=${BENCH_ROUNDS:-0} BENCH_RANKS=$(echo "${BENCH_RANKS-4 8 16 32}" | tr ' ' ,) BENCH_REPEAT=${BENCH_REPEAT:-5} BENCH_STORM_ARGS=$(echo "${BENCH_STORM_ARGS:-}" | tr ' ' ,) BENCH_FLOOD=$(echo "${BENCH_FLOOD-0 1024 4096}" | tr ' ' ,) BENCH_DELAY_US=0 BENCH_PERF=${BENCH_PERF:-} BENCH_PERF_S=${BENCH_PERF_S:-}"

BENCH_ROUNDS=${BENCH_ROUNDS:-0} BENCH_TARGET_WA=0.8 bench_report "$B" \
	"two qemu VMs (TCG, $VM_CPUS vCPUs each, Debian $KRELEASE), $RDMACM_DESC" vm
