#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# PID 1 of one of the two UML hosts of the benchmarks (hostfs root, the
# kernel of build/uml-bench).  From the kernel command line: PEER_NAME
# (a|b), PEER_IP, PEER_REMOTE, PEER_OUT, PEER_SYNC, PEER_BIN (peer_bench),
# BENCH_ROUNDS (single-pair rounds), BENCH_STORM (endpoint counts, comma
# separated: the kernel command line splits at spaces),
# BENCH_DELAY_US (netem delay added on vec0, 0 for none).
#
#  1. single pair, one endpoint per host: BENCH_ROUNDS rounds of each of
#     peer, cs, wa;
#  2. storm: for each N in BENCH_STORM, N endpoints (host a runs the even
#     ones, b the odd ones), every pair connects once, peer then wa;
#  3. host a alone: KUnit suite cm_peer_req_bench (BENCH_ONLY=reqpath: only
#     this).
#
# Each run starts at a time agreed through PEER_SYNC; the CM counters of
# rxe0 are saved around it.
. "$(dirname "$0")/../uml-lib.sh"
uml_mount
mount -t devtmpfs devtmpfs /dev 2>/dev/null

me=$PEER_NAME
other=$([ "$me" = a ] && echo b || echo a)
hidx=$([ "$me" = a ] && echo 0 || echo 1)
out=$PEER_OUT
sync_dir=$PEER_SYNC
mkdir -p "$out"
exec >"$out/init.log" 2>&1
if [ ! -x "$PEER_BIN" ] || [ ! -d "$sync_dir" ]; then
	echo "missing $PEER_BIN or $sync_dir: nothing to run" >&2
	uml_finish "$out"
fi
set -x
uml_rxe_up "$PEER_IP" "$PEER_REMOTE"
if [ "${BENCH_DELAY_US:-0}" -gt 0 ]; then
	tc qdisc add dev vec0 root netem delay "${BENCH_DELAY_US}us"
fi
# endpoint k lives on host k % 2: a (198.18.0.1) even, b odd
base_args=(--hosts 198.18.0.1,198.18.0.2)
uname -a >"$out/conditions.txt"
grep -m1 'model name' /proc/cpuinfo >>"$out/conditions.txt"

# BENCH_ONLY=reqpath: only the REQ path suite (step 3), on host a
[ "${BENCH_ONLY:-}" = reqpath ] && BENCH_ROUNDS=0 && BENCH_STORM=
for mode in peer cs wa; do
	[ "${BENCH_ROUNDS:-200}" -gt 0 ] || break
	run=pair-$mode
	start=$(uml_barrier "$sync_dir" "$me" "$other" "$run" 3000)
	uml_counters >"$out/$run.before"
	"$PEER_BIN" "${base_args[@]}" --mode "$mode" --endpoints 2 \
		--index "$hidx" --rounds "${BENCH_ROUNDS:-200}" \
		--period-ms 100 --window-ms 50 --spin --start-ms "$start" \
		--base-port 20000 --clock-file "$out/clock" >"$out/$run.0.jsonl" 2>"$out/$run.err"
	echo $? >"$out/$run.rc"
	uml_counters >"$out/$run.after"
done

# storm endpoints: one address (so one GID) each, endpoint k at
# 198.18.1.(k+1), even ones on host a, odd ones on b, in one /16 with the
# hosts' own addresses
IFS=, read -r -a storm <<<"${BENCH_STORM-4,8,16,32}"
max=0
for n in "${storm[@]}"; do [ "$n" -gt $max ] && max=$n; done
for ((k = hidx; k < max; k += 2)); do
	ip addr add "198.18.1.$((k + 1))/16" dev vec0
done
sleep 1
for n in "${storm[@]}"; do
	list=$(for ((k = 0; k < n; k++)); do printf '198.18.1.%d,' $((k + 1)); done)
	# all set-up happens before the start; the window bounds the storm
	window=$((2000 + n * n * 25))
	for mode in peer wa; do
		run=storm-$n-$mode
		start=$(uml_barrier "$sync_dir" "$me" "$other" "$run" \
			$((3000 + n * 400)))
		uml_counters >"$out/$run.before"
		pids=()
		for ((k = hidx; k < n; k += 2)); do
			"$PEER_BIN" --mode "$mode" \
				--hosts "${list%,}" \
				--endpoints "$n" --index "$k" --rounds 1 \
				--period-ms $((2 * window)) --window-ms "$window" \
				--start-ms "$start" --base-port 30000 \
				--clock-file "$out/clock.$k" \
				>"$out/$run.$k.jsonl" 2>"$out/$run.$k.err" &
			pids+=($!)
		done
		rc=0
		for p in "${pids[@]}"; do
			wait "$p" || rc=1
		done
		echo $rc >"$out/$run.rc"
		uml_counters >"$out/$run.after"
	done
done

uml_barrier "$sync_dir" "$me" "$other" done 0 >/dev/null

# 3. the CM's cost per inbound REQ (KUnit cm_peer_req_bench, over rxe0 in
#    loopback; host b is done by then)
suite=/sys/kernel/debug/kunit/cm_peer_req_bench
if [ "$me" = a ] && [ -w "$suite/run" ]; then
	echo 1 >"$suite/run"
	cat "$suite/results" >"$out/ktap-req-bench.txt"
fi
uml_finish "$out"
