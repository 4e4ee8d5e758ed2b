#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# PID 1 of one of the UML hosts of the benchmarks (hostfs root, the
# kernel of build/uml-bench).  From the kernel command line: PEER_NAME
# (a|b|...), PEER_HOSTS (how many: 2, or more on a bridge with
# BENCH_ONLY=storm), PEER_IP, PEER_REMOTE, PEER_OUT, PEER_SYNC, PEER_BIN
# (peer_bench),
# BENCH_ROUNDS (single-pair rounds), BENCH_RANKS (ranks per host of each
# storm, comma separated: the kernel command line splits at spaces),
# BENCH_REPEAT (storms of each size and mode), BENCH_STORM_ARGS (more
# peer_bench arguments for the storms, comma separated), BENCH_DELAY_US (netem delay
# added on the link, 0 for none), BENCH_FLOOD (step 2c), BENCH_ONLY.
#
#  1. single pair, one rank per host: BENCH_ROUNDS rounds of each of
#     peer, cs, wa, and held (peer, b connects 5 ms late);
#  2. storms: for each R in BENCH_RANKS, R ranks per host, every rank
#     connects to every rank of the other hosts (R x R connections per
#     pair of hosts), in each mode (BENCH_ONLY=storm: only this);
#  2b. single-pair peer, held and cs rounds with the kernel trace on
#     (BENCH_ONLY=trace: only this);
#  2c. floods (BENCH_FLOOD: ids, comma separated, 0 for unloaded), run
#     before 2b: root's peer storm of 4 x 4 while user nobody on host a
#     sends peer REQs that host b holds unanswered;
#  3. host a alone: KUnit suite cm_peer_req_bench (BENCH_ONLY=reqpath: only
#     this; BENCH_ONLY=conn: steps 1 and 2 only).
#
# Each run starts at a time agreed through PEER_SYNC; the CM counters of
# rxe0 are saved around it.
. "$(dirname "$0")/../uml-lib.sh"
if [ -n "${PEER_STAGE:-}" ]; then
	# a qemu VM (tests/bench/run-bench-vm.sh): Debian's kernel with our
	# modules from the staged tree, the NIC found by its address
	. "$(dirname "$0")/../vm/vm-guest.sh"
	vm_mount
	vm_stage_modules
	PEER_NETDEV=$(vm_netdev) || PEER_NETDEV=
else
	uml_mount
	mount -t devtmpfs devtmpfs /dev 2>/dev/null
fi

# host k (0, 1, ...) is named a, b, ... and has address 198.18.0.(k + 1);
# other: the other hosts' names, comma separated (for uml_barrier)
me=$PEER_NAME
names=(a b c d e f g h)
other= hosts= hidx=
for ((k = 0; k < ${PEER_HOSTS:-2}; k++)); do
	hosts+=${hosts:+,}198.18.0.$((k + 1))
	[ "${names[k]}" = "$me" ] && hidx=$k && continue
	other+=${other:+,}${names[k]}
done
out=$PEER_OUT
sync_dir=$PEER_SYNC
mkdir -p "$out"
exec >"$out/init.log" 2>&1
# PEER_LIB: the librdmacm to run the programs on (run-bench.sh)
if [ -n "${PEER_LIB:-}" ]; then
	export LD_LIBRARY_PATH=$PEER_LIB
fi
if [ ! -x "$PEER_BIN" ] || [ ! -d "$sync_dir" ]; then
	echo "missing $PEER_BIN or $sync_dir: nothing to run" >&2
	uml_finish "$out"
fi
if [ -z "$PEER_NETDEV" ]; then
	echo "no NIC with address $PEER_MAC" >&2
	uml_finish "$out"
fi
if [ -z "$hidx" ] ||
   { [ "${PEER_HOSTS:-2}" -gt 2 ] && [ "${BENCH_ONLY:-}" != storm ]; }; then
	echo "host $me of ${PEER_HOSTS:-2}: only a..h, more than 2 for storms only" >&2
	uml_finish "$out"
fi
set -x
uml_rxe_up "$PEER_IP" "$PEER_REMOTE"
# all hosts up (VMs boot at different speeds)
uml_barrier "$sync_dir" "$me" "$other" up 0 >/dev/null
if [ "${BENCH_DELAY_US:-0}" -gt 0 ]; then
	tc qdisc add dev "$PEER_NETDEV" root netem delay "${BENCH_DELAY_US}us"
fi
# rank k of R lives on host k / R
base_args=(--hosts "$hosts")
uname -a >"$out/conditions.txt"
grep -m1 'model name' /proc/cpuinfo >>"$out/conditions.txt"
echo "$(nproc) CPUs" >>"$out/conditions.txt"

# pair_rounds <mode> <run> <rounds> <base port> [args]: single-pair
# rounds, one rank per host.  Mode held is peer with host b's
# rdma_connect() 5 ms after the start: a's REQ is always held at b.
pair_rounds() {
	local mode=$1 run=$2 rounds=$3 port=$4 start extra=()

	shift 4
	if [ "$mode" = held ]; then
		mode=peer
		[ "$me" = b ] && extra=(--delay-ms "$HELD_DELAY_MS")
	fi
	start=$(uml_barrier "$sync_dir" "$me" "$other" "$run" 3000)
	uml_counters >"$out/$run.before"
	"$PEER_BIN" "${base_args[@]}" --mode "$mode" --ranks 1 \
		--index "$hidx" --rounds "$rounds" --period-ms 100 \
		--window-ms 50 --spin --start-ms "$start" --no-send \
		--base-port "$port" --clock-file "$out/clock" "${extra[@]}" "$@" \
		>"$out/$run.0.jsonl" 2>"$out/$run.err"
	echo $? >"$out/$run.rc"
	uml_counters >"$out/$run.after"
}
HELD_DELAY_MS=5

# storm_run <ranks> <mode> <repeat> [run]: one storm, results in $out/$run.*
storm_run() {
	local n=$1 mode=$2 run=${4:-storm-$1-$2-$3} k pids=() rc=0 peak i perf
	# ports below rdma_cm's ephemeral range (32768 up): a rank that
	# listens and connects (cs on more than two hosts) must find its own
	# port free
	local base=$((30000 + (run_no++ % 40) * 64))

	drops >"$out/$run.drops.before"
	uml_counters >"$out/$run.before"
	slab_kb >"$out/$run.slab"
	[ -r /proc/slabinfo ] && cp /proc/slabinfo "$out/$run.slabinfo.before"
	for ((k = 0; k < n; k++)); do
		"$PEER_BIN" "${base_args[@]}" --mode "$mode" --ranks "$n" \
			--index $((hidx * n + k)) --window-ms 60000 \
			--base-port "$base" --clock-file "$out/clock.$k" \
			--ready-file "$out/$run.ready.$k" \
			--start-file "$sync_dir/$run.start" ${BENCH_STORM_ARGS//,/ } \
			>"$out/$run.$k.jsonl" 2>"$out/$run.$k.err" &
		pids+=($!)
	done
	# the start: once every rank of every host has set up
	for ((i = 0; i < 1200; i++)); do
		[ "$(ls "$out" | grep -c "^$run\.ready\.")" -ge "$n" ] && break
		sleep 0.1
	done
	uml_barrier "$sync_dir" "$me" "$other" "$run" 500 >/dev/null
	# BENCH_PERF=1: a CPU profile of the whole host during the storm
	[ -n "${BENCH_PERF:-}" ] && {
		perf record -a -g -F 499 -o "/run/$run.perf" -q -- \
			sleep "${BENCH_PERF_S:-4}" 2>"$out/$run.perf.err" &
		perf=$!
	}
	peak=$(slab_kb)
	# (its ranks only: a flood may run beside them)
	while kill -0 "${pids[@]}" 2>/dev/null; do
		i=$(slab_kb)
		[ "$i" -gt "$peak" ] && peak=$i
		{ read -r up _ </proc/uptime; read -r l </proc/stat
		  echo "$up $l"; } >>"$out/$run.cpu"
		sleep 0.2
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	echo $rc >"$out/$run.rc"
	[ -n "${BENCH_PERF:-}" ] && {
		wait "$perf"
		perf report -i "/run/$run.perf" --stdio --no-children \
			--sort dso,sym -g none --percent-limit 0.3 \
			>"$out/$run.perf.txt" 2>>"$out/$run.perf.err"
		rm -f "/run/$run.perf"
	}
	echo "$peak" >>"$out/$run.slab"
	sleep 1
	slab_kb >>"$out/$run.slab"
	[ -r /proc/slabinfo ] && cp /proc/slabinfo "$out/$run.slabinfo.after"
	uml_counters >"$out/$run.after"
	drops >"$out/$run.drops.after"
}

# trace_pairs: BENCH_ONLY=trace, single-pair peer, held and cs rounds with the
# CM's, the MAD layer's and the scheduler's trace events and peer_bench's
# markers, into $out/trace-MODE.txt (tests/bench/trace-round.py reads them)
trace_pairs() {
	local t=/sys/kernel/tracing mode e

	mount -t tracefs tracefs $t || return
	echo 16384 >$t/buffer_size_kb
	# UML's default (local) trace clock ticks in jiffies
	echo mono >$t/trace_clock
	for e in ib_cm rdma_cma ib_mad; do
		echo 1 >"$t/events/$e/enable"
	done
	echo 1 >$t/events/sched/sched_switch/enable
	echo 1 >$t/events/sched/sched_wakeup/enable
	for mode in peer held cs; do
		echo >$t/trace
		pair_rounds "$mode" "trace-$mode" "${BENCH_ROUNDS:-40}" 25000 \
			--trace
		cp $t/trace "$out/trace-$mode.txt"
	done
	echo 0 >$t/tracing_on
}

case "${BENCH_ONLY:-}" in
# BENCH_ONLY=reqpath: only the REQ path suite (step 3), on host a
trace | reqpath) BENCH_ROUNDS=0 BENCH_RANKS= BENCH_FLOOD= ;;
storm) BENCH_ROUNDS=0 BENCH_FLOOD= ;;
esac
for mode in peer cs wa held; do
	[ "${BENCH_ROUNDS:-200}" -gt 0 ] || break
	pair_rounds "$mode" pair-$mode "${BENCH_ROUNDS:-200}" 20000
done

# 2. storms, MPI-style: R ranks per host, one port each on the host's
#    address, every rank connects to every rank of the other hosts at
#    once (R x R connections per pair of hosts); BENCH_REPEAT times each
#    mode, interleaved.
#    Slab (/proc/meminfo) before, at its peak during, and after.
IFS=, read -r -a storm <<<"${BENCH_RANKS-4,8,16,32}"
slab_kb() { awk '/^Slab:/ { print $2 }' /proc/meminfo; }
# where packets may be lost: the link, the backlog, rxe
drops() {
	ip -s -s link show "$PEER_NETDEV"
	cat /proc/net/softnet_stat
	grep -H '' /sys/class/infiniband/rxe0/ports/1/hw_counters/* 2>/dev/null
}
run_no=0
for n in "${storm[@]}"; do
	for ((rep = 0; rep < ${BENCH_REPEAT:-3}; rep++)); do
		for mode in peer cs wa; do
			storm_run "$n" "$mode" "$rep"
		done
	done
done

# 2c. floods: root's peer storm of FLOOD_RANKS ranks per host while user
#    nobody floods: on a, N ids peer-connect (no QP) to N ports that, on
#    b, nobody bound as peer and never connects, so that b holds their
#    REQs unanswered; N = 0 is the unloaded storm, interleaved.  The flood
#    goes out once both hosts set it up, before the storm's ranks set up,
#    and lasts until the storm ends.  Counters around the whole flood in
#    $run.flood.{before,after}, the flooder's exit in $run.flood.rc.
FLOOD_RANKS=4
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
mkdir -p -m 1777 /run/peer-flood
flood_run() {	# flood_run <ids> <repeat>
	local n=$1 run=flood-$FLOOD_RANKS-$1-$2 pid= i sink= rc=0
	local ready=/run/peer-flood/flood-$1-$2.ready

	if [ "$n" -gt 0 ]; then
		[ "$me" = b ] && sink=--sink
		"${nobody[@]}" "${PEER_BIN%/*}/peer_flood" $sink \
			--local "$PEER_IP" --remote "$PEER_REMOTE" --port 40000 \
			--count "$n" --hold-ms 600000 --ready-file "$ready" \
			--go-file "$sync_dir/$run.go" \
			--stop-file "$sync_dir/$run.stop" \
			>"$out/$run.flood.log" 2>&1 &
		pid=$!
		for ((i = 0; i < 1800; i++)); do
			[ -e "$ready" ] || ! kill -0 "$pid" 2>/dev/null && break
			sleep 0.1
		done
		uml_barrier "$sync_dir" "$me" "$other" "$run.flood" 0 >/dev/null
		uml_counters >"$out/$run.flood.before"
		[ "$me" = a ] && touch "$sync_dir/$run.go"
	fi
	storm_run "$FLOOD_RANKS" peer "$2" "$run"
	[ -n "$pid" ] || return 0
	uml_barrier "$sync_dir" "$me" "$other" "$run.end" 0 >/dev/null
	touch "$sync_dir/$run.stop"
	wait "$pid" || rc=1
	[ -e "$ready" ] || rc=1
	echo $rc >"$out/$run.flood.rc"
	uml_counters >"$out/$run.flood.after"
	# the destroyed ids' REJs and held REQs gone before the next run
	sleep 2
}
IFS=, read -r -a flood <<<"${BENCH_FLOOD-}"
for ((rep = 0; rep < ${#flood[@]} * ${BENCH_REPEAT:-3}; rep++)); do
	[ "${#flood[@]}" -gt 0 ] || break
	flood_run "${flood[rep % ${#flood[@]}]}" $((rep / ${#flood[@]}))
done

# 2b. the trace (last: tracepoints stay off for everything else)
[ -z "${BENCH_ONLY:-}" ] || [ "${BENCH_ONLY:-}" = trace ] &&
	BENCH_ROUNDS=40 trace_pairs

uml_barrier "$sync_dir" "$me" "$other" done 0 >/dev/null

# 3. the CM's cost per inbound REQ (KUnit cm_peer_req_bench, over rxe0 in
#    loopback; host b is done by then)
suite=/sys/kernel/debug/kunit/cm_peer_req_bench
case "${BENCH_ONLY:-}" in "" | reqpath) run_req=1 ;; *) run_req= ;; esac
if [ "$me" = a ] && [ -w "$suite/run" ] && [ -n "$run_req" ]; then
	echo 1 >"$suite/run"
	cat "$suite/results" >"$out/ktap-req-bench.txt"
fi
uml_finish "$out"
