#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# PID 1 of one of the two VMs of tests/rds/run-rds.sh (Debian's kernel,
# our modules staged, root = the host's / over 9p): soft-RoCE on the
# link, then for each size in PEER_RDS_CONNS (comma separated) the RDS
# scenario of tests/rds/rds-scenario.sh with PEER_RDS_ROUNDS rounds (the
# first both ends sending first, each later one a reconnect of all),
# PEER_RDS_REPEAT times for each mode of PEER_RDS_MODES in turn, as runs
# <mode>-<size>-<k> (see rds_scenario); power off.
. "$(dirname "$0")/../uml-lib.sh"
. "$(dirname "$0")/../vm/vm-guest.sh"
. "$(dirname "$0")/../e2e/scenarios.sh"
. "$(dirname "$0")/rds-scenario.sh"
vm_mount
e2e_begin
echo "$(uname -r), $(nproc) CPUs, $(date -u)"
set -x
vm_stage_modules
PEER_NETDEV=$(vm_netdev) || {
	echo "no NIC with address $PEER_MAC" >&2
	uml_finish "$out"
}
uml_rxe_up "$PEER_IP" "$PEER_REMOTE"
barrier up >/dev/null
modes=${PEER_RDS_MODES:-stock}
for n in ${PEER_RDS_CONNS//,/ }; do
	for k in $(seq "${PEER_RDS_REPEAT:-1}"); do
		for mode in ${modes//,/ }; do
			rds_scenario "$mode-$n-$k" "$n" "${PEER_RDS_MSGS:-8}" \
				"${PEER_RDS_ROUNDS:-3}"
		done
	done
done
uml_finish "$out"
