# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RDS/IB between the two VMs, run by PID 1 of each (tests/vm/vm-e2e-init.sh,
# tests/rds/rds-init.sh); source it after tests/e2e/scenarios.sh (me, other,
# out, sync_dir, barrier) once rxe0 is up on $PEER_NETDEV.
#
# rds_scenario <tag> <conns> <msgs> <rounds>: tests/rds/rds_storm
# with <conns> connections (TOS 0..conns-1, ports 18700..; rds and
# rds_rdma loaded afresh, so none exists: by the tag's first word, stock:
# Debian's on both hosts, peer: the series' on both, mixed: the series'
# on a and Debian's on b), both hosts sending first at
# one start time; in each round after the first, both
# take rxe0 away at once ("rdma link delete": RDS drops every connection
# of the device), queue the round's messages, and add it again at once:
# every connection reconnects from both ends at once.  A round may take
# PEER_RDS_TIMEOUT_MS (60000).
# Into $out: rds-<tag>.log (the program's report and RDS counters),
# .rc, RDS's kernel log lines (.kmsg), and rds-<tag>.events: what
# happened meanwhile, as "name value":
#   rej        REJs this CM sent (ib_cma:icm_send_rej trace events)
#   qp_create  QPs rdma_cm created (rdma_cma:cm_qp_create)
#   dropping   "rejected, dropping connection" lines of RDS in the log
#   mem_before, mem_after  MemAvailable (kB) at the start and the end
#   req_retries  REQs the CM sent again on a timeout (cm_tx_retries/req)
#              since rxe0 was last added: in the last round
rds_trace=/sys/kernel/debug/tracing

rds_trace_on() {
	local e
	echo 0 >"$rds_trace/tracing_on"
	echo >"$rds_trace/trace"
	echo 4096 >"$rds_trace/buffer_size_kb"
	for e in ib_cma/icm_send_rej rdma_cma/cm_qp_create; do
		echo 1 >"$rds_trace/events/$e/enable"
	done
	echo 1 >"$rds_trace/tracing_on"
}

# rds_load <stock|peer>: rds and rds_rdma afresh, Debian's (kernel/) or
# the series' (updates/cm-peer, as `make install` puts them)
rds_load() {
	local dir=/lib/modules/$(uname -r) m

	# RDS keeps its connections after the sockets close: start from none
	modprobe -r rds_rdma rds 2>/dev/null
	[ -d /sys/module/rds ] && return 1
	if [ "$1" = peer ]; then
		for m in rds rds_rdma; do
			case "$(modinfo -n "$m")" in
			"$dir/updates/cm-peer/$m.ko") ;;
			*) echo "$m is not the series' here" >&2; return 1 ;;
			esac
		done
		modprobe rds_rdma
	else
		insmod "$dir/kernel/net/rds/rds.ko.xz" &&
			insmod "$dir/kernel/net/rds/rds_rdma.ko.xz"
	fi
}

rds_scenario() {
	local tag=$1 conns=$2 msgs=$3 rounds=$4
	local start kmsg i storm=${PEER_BIN%/*}/rds_storm kind=${1%%-*} mem

	[ "$kind" = mixed ] && { [ "$me" = a ] && kind=peer || kind=stock; }
	if ! rds_load "$kind" 2>"$out/rds-$tag.load"; then
		echo "rds and rds_rdma ($kind) could not be loaded afresh" >"$out/rds-$tag.log"
		echo 1 >"$out/rds-$tag.rc"
		# keep in step with the other host
		barrier "rds-$tag" >/dev/null
		barrier "rds-$tag-done" >/dev/null
		return 1
	fi
	rds_trace_on
	mem=$(awk '/^MemAvailable/ { print $2 }' /proc/meminfo)
	# the kernel log as it comes (its ring may wrap during a run)
	dmesg -C
	dmesg -w >"/run/kmsg-$tag" 2>&1 &
	kmsg=$!
	start=$(($(barrier "rds-$tag") + ${PEER_MARGIN_MS:-4000}))
	mkdir -p "$sync_dir/rds-$tag"
	"$storm" --local "$PEER_IP" --remote "$PEER_REMOTE" --name "$me" \
		--peer-name "$other" --conns "$conns" --msgs "$msgs" \
		--rounds "$rounds" --start-ms "$start" \
		--timeout-ms "${PEER_RDS_TIMEOUT_MS:-60000}" \
		--down "timeout 300 rdma link delete rxe0" \
		--up "timeout 60 rdma link add rxe0 type rxe netdev $PEER_NETDEV" \
		--sync-dir "$sync_dir/rds-$tag" >"$out/rds-$tag.log" 2>&1
	echo $? >"$out/rds-$tag.rc"
	echo 0 >"$rds_trace/tracing_on"
	# all of the run's log read: up to a line of ours
	echo "rds_scenario: $tag done" >/dev/kmsg
	for i in $(seq 50); do
		grep -q "rds_scenario: $tag done" "/run/kmsg-$tag" && break
		sleep 0.1
	done
	kill "$kmsg"
	wait "$kmsg" 2>/dev/null
	grep -i 'rds' "/run/kmsg-$tag" >"$out/rds-$tag.kmsg"
	{
		echo "rej $(grep -c 'icm_send_rej:' "$rds_trace/trace")"
		echo "qp_create $(grep -c 'cm_qp_create:' "$rds_trace/trace")"
		echo "dropping $(grep -c "rejected, dropping connection" "/run/kmsg-$tag")"
		echo "mem_before $mem"
		echo "mem_after $(awk '/^MemAvailable/ { print $2 }' /proc/meminfo)"
		echo "req_retries $(cat /sys/class/infiniband/rxe0/ports/1/cm_tx_retries/req 2>/dev/null || echo 0)"
	} >"$out/rds-$tag.events"
	barrier "rds-$tag-done" >/dev/null
}
