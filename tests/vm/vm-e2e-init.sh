#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# PID 1 of one of the two VMs of a qemu end-to-end run (tests/vm/run-vm.sh:
# Debian's kernel; tests/vm/run-smp.sh: the SMP debug kernel), root = the
# host's / over 9p.  From the kernel command line (tests/vm/vm-lib.sh
# vm_pair): PEER_NAME (a|b), PEER_IP, PEER_REMOTE, PEER_MAC, PEER_SHARE,
# PEER_OUT, PEER_SYNC, PEER_BIN (peer_ping); for Debian's kernel also
# PEER_STAGE, the staged root (Debian's modules and ours, `make install`
# with DESTDIR), whose modules are loaded with modprobe and checked first
# (results in $PEER_OUT/modules.tsv: "name<TAB>PASS|FAIL<TAB>detail").
# Then the scenarios of tests/e2e/scenarios.sh, on Debian's kernel RDS/IB
# (tests/rds/rds-scenario.sh), a kmemleak scan where the kernel has one,
# power off.
. "$(dirname "$0")/../uml-lib.sh"
. "$(dirname "$0")/vm-guest.sh"
. "$(dirname "$0")/../e2e/scenarios.sh"
. "$(dirname "$0")/../rds/rds-scenario.sh"
vm_mount

e2e_begin
echo "$(uname -r), $(nproc) CPUs, $(date -u)"
set -x

# ULPs that must load next to our ib_cm/rdma_cm/rdma_ucm (the in-tree
# ones, from Debian's tree)
ULPS=(ib_ipoib rpcrdma nvme-rdma ib_srp ib_isert rds_rdma)
OURS=(ib_cm rdma_cm rdma_ucm)

mcheck() {	# mcheck <name> <PASS|FAIL> <detail>
	printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$out/modules.tsv"
}
# build ID of a loaded module (its ELF note in sysfs) and of a .ko file
loaded_build_id() {
	od -An -tx1 -v -j16 "/sys/module/$1/notes/.note.gnu.build-id" 2>/dev/null |
		tr -d ' \n'
}
file_build_id() {
	readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: *//p'
}
# ours: loaded, from updates/cm-peer (the running module's build ID is the
# file's), out-of-tree taint, our parameters present
check_ours() {	# check_ours <module>
	local m=$1 path id file_id taint
	path=$(modinfo -n "$m" 2>/dev/null)
	id=$(loaded_build_id "$m")
	file_id=$(file_build_id "/lib/modules/$(uname -r)/updates/cm-peer/$m.ko")
	taint=$(cat "/sys/module/$m/taint" 2>/dev/null)
	if [ -d "/sys/module/$m" ] && [ "${path#*/updates/cm-peer/}" != "$path" ] &&
	   [ -n "$id" ] && [ "$id" = "$file_id" ] && [ "${taint#*O}" != "$taint" ]; then
		mcheck "loaded_from_updates/$m" PASS "$path build-id $id taint $taint"
	else
		mcheck "loaded_from_updates/$m" FAIL \
			"loaded=$([ -d "/sys/module/$m" ] && echo yes || echo no) modinfo -n=$path build-id loaded=$id file=$file_id taint=$taint"
	fi
}
# a ULP: modprobe succeeds and the module uses one of ours (holders)
check_ulp() {	# check_ulp <module>
	local m=$1 sysname=${1//-/_} rc users=""
	modprobe "$m" >"$out/modprobe-$m.log" 2>&1
	rc=$?
	for o in "${OURS[@]}"; do
		[ -e "/sys/module/$o/holders/$sysname" ] && users+=" $o"
	done
	if [ $rc -eq 0 ] && [ -d "/sys/module/$sysname" ] && [ -n "$users" ]; then
		mcheck "ulp_loads/$m" PASS "$(modinfo -n "$m") uses$users"
	else
		mcheck "ulp_loads/$m" FAIL \
			"modprobe rc $rc: $(tr '\n' ' ' <"$out/modprobe-$m.log") uses:${users:- none of ours}"
	fi
}

if [ -n "${PEER_STAGE:-}" ]; then
	: >"$out/modules.tsv"
	vm_stage_modules
	for m in "${OURS[@]}"; do
		check_ours "$m"
	done
	for m in "${ULPS[@]}"; do
		check_ulp "$m"
	done
	lsmod >"$out/lsmod.txt"
fi

PEER_NETDEV=$(vm_netdev) || {
	echo "no NIC with address $PEER_MAC" >&2
	uml_finish "$out"
}
if [ ! -x "$PEER_BIN" ] || [ ! -d "$sync_dir" ]; then
	echo "missing $PEER_BIN or $sync_dir: nothing to run" >&2
	uml_finish "$out"
fi

e2e_scenarios

# RDS/IB, Debian's rds_rdma on our modules, then the series' (the peer
# model): 16 connections (one per TOS), both ends sending first, then all
# reconnecting at once; every message arrives once (tests/rds/rds-report.py
# checks it)
if [ -n "${PEER_STAGE:-}" ]; then
	PEER_RDS_TIMEOUT_MS=20000 rds_scenario stock-16-1 16 8 2
	PEER_RDS_TIMEOUT_MS=20000 rds_scenario peer-16-1 16 8 2
fi

# Interop with an unpatched CM: host b swaps ours for Debian's own ib_cm,
# rdma_cm and rdma_ucm (kernel/, not updates/); a, still ours, peer-
# connects to a port of b: b's stock CM rejects every REQ (no listener),
# a sends it again and gets the REJ once its budget is spent.  Afterwards
# a has no rdma_cm id left.
interop() {
	local core=/lib/modules/$(uname -r)/kernel/drivers/infiniband/core m
	if [ "$me" = b ]; then
		modprobe -r "${ULPS[@]//-/_}" rdma_ucm rdma_cm ib_cm \
			>"$out/interop-swap.log" 2>&1
		for m in ib_cm rdma_cm rdma_ucm; do
			insmod "$core/$m.ko.xz" >>"$out/interop-swap.log" 2>&1
		done
		xz -dc "$core/ib_cm.ko.xz" >/run/stock-ib_cm.ko
		if [ -d /sys/module/ib_cm ] && [ -d /sys/module/rdma_ucm ] &&
		   [ "$(loaded_build_id ib_cm)" = "$(file_build_id /run/stock-ib_cm.ko)" ]; then
			mcheck interop_stock_cm_loaded PASS "$core/{ib_cm,rdma_cm,rdma_ucm}.ko.xz"
		else
			mcheck interop_stock_cm_loaded FAIL "$(tr '\n' ' ' <"$out/interop-swap.log")"
		fi
	fi
	barrier interop >/dev/null
	if [ "$me" = a ]; then
		run interop "$PEER_BIN" "${ping_args[@]}" --port 7520 \
			--peer-name "$other" --timeout-ms 110000
		rdma resource show cm_id >"$out/interop-cm_ids.txt" 2>&1
	fi
	barrier interop_done >/dev/null
}
[ -n "${PEER_STAGE:-}" ] && interop

# CONFIG_INFINIBAND_CM_PEER=n: both hosts swap to the series' ib_cm,
# rdma_cm and rdma_ucm built without the option (PEER_MODS_N, see
# tests/vm/run-vm.sh).  Client/server works as on a stock kernel, and the
# peer option is refused with EOPNOTSUPP.
peer_off() {
	local m ok=PASS ids="" pings rc
	modprobe -r "${ULPS[@]//-/_}" >"$out/peer-off-swap.log" 2>&1
	rmmod rdma_ucm rdma_cm ib_cm >>"$out/peer-off-swap.log" 2>&1
	for m in ib_cm rdma_cm rdma_ucm; do
		insmod "$PEER_MODS_N/$m.ko" >>"$out/peer-off-swap.log" 2>&1
		[ -n "$(loaded_build_id "$m")" ] &&
		[ "$(loaded_build_id "$m")" = "$(file_build_id "$PEER_MODS_N/$m.ko")" ] ||
			ok=FAIL
		ids+=" $m:$(loaded_build_id "$m")"
	done
	mcheck peer_off/loaded $ok "$PEER_MODS_N:$ids $(tr '\n' ' ' <"$out/peer-off-swap.log")"
	barrier peer_off >/dev/null
	if [ "$me" = a ]; then
		timeout 30 rping -s -a "$PEER_IP" -p 7530 -C 3 -v \
			>"$out/peer-off-rping.log" 2>&1
		rc=$?
	else
		sleep 2
		timeout 30 rping -c -a "$PEER_REMOTE" -p 7530 -C 3 -v \
			>"$out/peer-off-rping.log" 2>&1
		rc=$?
		"$PEER_BIN" "${ping_args[@]}" --port 7531 --timeout-ms 3000 \
			>"$out/peer-off-option.log" 2>&1
		if [ $? -ne 0 ] && grep -q "rdma_set_option(PEER_TO_PEER) after .*: Operation not supported" \
			"$out/peer-off-option.log"; then
			mcheck peer_off/option_refused PASS "$(head -1 "$out/peer-off-option.log")"
		else
			mcheck peer_off/option_refused FAIL "$(tr '\n' ' ' <"$out/peer-off-option.log")"
		fi
	fi
	pings=$(grep -c "ping data: rdma-ping-" "$out/peer-off-rping.log")
	if [ "$pings" -eq 3 ]; then
		mcheck peer_off/rping_client_server PASS "rc $rc, $pings pings"
	else
		mcheck peer_off/rping_client_server FAIL "rc $rc, $pings pings: $(tail -3 "$out/peer-off-rping.log" | tr '\n' ' ')"
	fi
	barrier peer_off_done >/dev/null
}
[ -n "${PEER_STAGE:-}" ] && [ -n "${PEER_MODS_N:-}" ] && peer_off

# Debian's kernel: our modules unload again (after the ULPs using them;
# the insmod'ed ones of peer_off, or on b the stock ones of the interop
# step)
if [ -n "${PEER_STAGE:-}" ]; then
	ulps_sys=("${ULPS[@]//-/_}")
	modprobe -r "${ulps_sys[@]}" >"$out/unload.log" 2>&1
	if [ "$me" = b ] || [ -n "${PEER_MODS_N:-}" ]; then
		rmmod rdma_ucm rdma_cm ib_cm >>"$out/unload.log" 2>&1
	else
		modprobe -r rdma_ucm rdma_cm ib_cm >>"$out/unload.log" 2>&1
	fi
	rc=$?
	left=$(for m in "${OURS[@]}"; do [ -d "/sys/module/$m" ] && echo "$m"; done)
	if [ $rc -eq 0 ] && [ -z "$left" ]; then
		mcheck modules_unload PASS "ULPs, rdma_ucm, rdma_cm, ib_cm removed"
	else
		mcheck modules_unload FAIL "rc $rc, still loaded: $left; $(tr '\n' ' ' <"$out/unload.log")"
	fi
fi
uml_finish "$out"
