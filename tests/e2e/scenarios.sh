# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The two-host end-to-end scenarios, run by PID 1 of each host: the UML
# hosts (tests/e2e/uml-e2e-init.sh) and the qemu VMs
# (tests/vm/vm-e2e-init.sh).  Source it after tests/uml-lib.sh, call
# e2e_begin, then e2e_scenarios.  From the kernel command line:
#   PEER_NAME     this host's name (a|b)
#   PEER_OUT      this host's result folder
#   PEER_SYNC     folder both hosts see, for barriers
#   PEER_IP, PEER_REMOTE, PEER_BIN (peer_ping), PEER_NETDEV (the link)
# Results (logs, exit codes, cm_peer counters around each scenario) go to
# $out for tests/e2e/check-e2e.py.
#
# Timing, for slow hosts (the debug kernel on qemu TCG sets up an
# rdma_cm id in seconds, not milliseconds; defaults are the UML ones):
#   PEER_MARGIN_MS  start time this far after a barrier (4000)
#   PEER_EARLY_MS   how late b connects in the early scenario (200)
#   PEER_IDLE_MS    how long b stays bound in the one-sided scenario: from
#                  before a's REQ arrives until well after it expired,
#                  the other users' attempts run meanwhile (14000)
#   PEER_RANKS      rank processes per host in the ranks scenario (4)
#   PEER_ROUND_MS   its rounds' spacing (6000), PEER_RANK_TIMEOUT_MS how long
#                  a round may take after its start (4000)
#   PEER_COLLIDE_DELAY_MS  netem delay on the link during the collision
#                  tries (0: none): REQs cross when both ends send within
#                  it, and two VMs start only to some tens of ms together

# e2e_begin: me, other, out and sync_dir from the command line; everything
# the init prints from here on goes to $out/init.log.
e2e_begin() {
	me=$PEER_NAME
	other=$([ "$me" = a ] && echo b || echo a)
	out=$PEER_OUT
	sync_dir=$PEER_SYNC
	mkdir -p "$out"
	exec >"$out/init.log" 2>&1
}

e2e_scenarios() {
	uml_rxe_up "$PEER_IP" "$PEER_REMOTE"
	# both hosts up (VMs boot at different speeds), the link answers
	barrier up >/dev/null
	for i in $(seq 50); do
		ping -c1 -W1 "$PEER_REMOTE" >/dev/null 2>&1 && break
		sleep 0.2
	done

	ping_args=(--local "$PEER_IP" --remote "$PEER_REMOTE" --name "$me")

	# 1. simultaneous connect: the REQs collide (tried up to 8 times,
	#    since a REQ that arrives before the other end sent its own is
	#    held instead)
	echo "${PEER_COLLIDE_DELAY_MS:-0}" >"$out/collision.delay_ms"
	if [ "${PEER_COLLIDE_DELAY_MS:-0}" -gt 0 ]; then
		tc qdisc add dev "$PEER_NETDEV" root netem \
			delay "${PEER_COLLIDE_DELAY_MS}ms"
	fi
	for try in 1 2 3 4 5 6 7 8; do
		mkdir -p "$sync_dir/collision$try"
		run "collision$try" "$PEER_BIN" "${ping_args[@]}" \
			--port $((7470 + try)) \
			--sync-dir "$sync_dir/collision$try" --peer-name "$other"
	done
	if [ "${PEER_COLLIDE_DELAY_MS:-0}" -gt 0 ]; then
		tc qdisc del dev "$PEER_NETDEV" root
	fi

	# 2. early: b connects at least 200 ms after a, once a's REQ is held
	#    by b (the hosts' clocks and speeds differ too much under TCG to
	#    order the two by time alone)
	mkdir -p "$sync_dir/early"
	late=()
	[ "$me" = b ] && late=(--delay-ms "${PEER_EARLY_MS:-200}" --wait-held)
	run early "$PEER_BIN" "${ping_args[@]}" --port 7480 "${late[@]}" \
		--sync-dir "$sync_dir/early" --peer-name "$other"

	# 2b. ranks: PEER_RANKS processes per host, each with ONE port (a's
	#     7600.., b's 7700..), each connecting to every rank of the other
	#     host at once, 3 rounds; each checks its partners' names
	start=$(barrier ranks)
	ranks
	barrier ranks_done >/dev/null

	# 2c. loopback on one rxe device: two processes on host a, two local
	#     addresses (distinct GIDs on one port), same port
	ip addr add 198.18.0.3/24 dev "$PEER_NETDEV"
	start=$(barrier loopback)
	if [ "$me" = a ]; then
		mkdir -p "$sync_dir/loopback"
		counters >"$out/loopback.before"
		"$PEER_BIN" --local 198.18.0.1 --remote 198.18.0.3 --name la \
			--peer-name lb --port 7483 --shared-host \
			--sync-dir "$sync_dir/loopback" >"$out/loopback-la.log" 2>&1 &
		pid=$!
		"$PEER_BIN" --local 198.18.0.3 --remote 198.18.0.1 --name lb \
			--peer-name la --port 7483 --shared-host \
			--sync-dir "$sync_dir/loopback" >"$out/loopback-lb.log" 2>&1
		echo $? >"$out/loopback-lb.rc"
		wait $pid
		echo $? >"$out/loopback-la.rc"
		counters >"$out/loopback.after"
	fi

	# 3. b binds as a peer but never connects: a's REQ is held as long as
	#    a waits for it (its response timeout and retries, about 74 s for
	#    rdma_cm), then rejected; a, past its budget, reports the REJ and
	#    does not send it again
	start=$(barrier oneside)
	if [ "$me" = a ]; then
		run oneside "$PEER_BIN" "${ping_args[@]}" --port 7481 \
			--start-ms "$start" --timeout-ms 110000
	else
		# idle from before a's start until well after the hold expired
		counters >"$out/oneside.before"
		"$PEER_BIN" "${ping_args[@]}" --port 7481 \
			--idle-ms "${PEER_IDLE_MS:-14000}" \
			>"$out/oneside.log" 2>&1 &
		pid=$!
		# meanwhile a listener on the port the peer holds is refused
		sleep 2
		timeout 10 rping -s -a "$PEER_IP" -p 7481 -C 1 >"$out/conflict.log" 2>&1
		echo $? >"$out/conflict.rc"
		# other users' processes (nobody): the option needs no
		# privilege, as rdma_listen() does not, but they cannot take
		# the bound port...
		nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
		"${nobody[@]}" "$PEER_BIN" "${ping_args[@]}" --port 7485 --idle-ms 100 \
			>"$out/unpriv.log" 2>&1
		echo $? >"$out/unpriv.rc"
		"${nobody[@]}" "$PEER_BIN" "${ping_args[@]}" --port 7481 --idle-ms 100 \
			>"$out/steal-bind.log" 2>&1
		echo $? >"$out/steal-bind.rc"
		# ...nor claim a's REQ held for $PEER_IP by connecting to a from
		# another local address of the same device (it must fail)
		ip addr add 198.18.0.4/24 dev "$PEER_NETDEV"
		sleep 1
		"${nobody[@]}" "$PEER_BIN" --local 198.18.0.4 --remote "$PEER_REMOTE" \
			--name thief --port 7481 --timeout-ms 9000 \
			>"$out/steal-held.log" 2>&1
		echo $? >"$out/steal-held.rc"
		# ...and a peer connect from their own port to a's port 4420
		# does not take 4420 here: root listens on it meanwhile
		"${nobody[@]}" "$PEER_BIN" --local "$PEER_IP" --remote "$PEER_REMOTE" \
			--name squat --port 6000 --remote-port 4420 \
			--timeout-ms 8000 >"$out/squat.log" 2>&1 &
		squat=$!
		sleep 1
		rping_pair listen-later 4420
		wait $squat
		# two peer ids with one 4-tuple: the second is refused
		"${PEER_BIN%/*}/peer_ranks" --local "$PEER_IP" --port 6100 \
			--name dup --peer "$PEER_REMOTE:6200:x" \
			--peer "$PEER_REMOTE:6200:x" --rounds 1 \
			--start-ms "$(date +%s%3N)" --timeout-ms 1000 \
			>"$out/dup.log" 2>&1
		owners
		wait $pid
		echo $? >"$out/oneside.rc"
		counters >"$out/oneside.after"
	fi

	# 3e. nobody's peer listener on b's second address, port 7487: a's
	#    REQ for $PEER_IP:7487 is held for b's peer id, 3 s late, not
	#    taken by the listener (which would reject it)
	start=$(($(barrier otheraddr) + ${PEER_MARGIN_MS:-4000}))
	late_arg=()
	if [ "$me" = b ]; then
		late_arg=(--late-ms 3000)
		"${nobody[@]}" "${PEER_BIN%/*}/peer_ranks" --local 198.18.0.4 \
			--port 7487 --name nl --listen \
			--peer "$PEER_REMOTE:7499:ghost:a" --rounds 1 \
			--start-ms "$(date +%s%3N)" \
			--timeout-ms $((start - $(date +%s%3N) + 20000)) \
			>"$out/otheraddr-listener.log" 2>&1 &
		nl=$!
	fi
	run otheraddr "$PEER_BIN" "${ping_args[@]}" --port 7487 \
		--peer-name "$other" --shared-host --start-ms "$start" \
		"${late_arg[@]}" --timeout-ms 30000
	if [ "$me" = b ]; then
		wait $nl
		echo $? >"$out/otheraddr-listener.rc"
	fi

	# 3b. late: b's process starts 0.5, 2 and 5 s after a connected (three
	#    pairs at once); a's REQ finds nothing bound on b, is rejected and
	#    sent again until b is there: no application retry
	#    (a margin more: a's three set up at once)
	start=$(($(barrier late) + ${PEER_MARGIN_MS:-4000}))
	pids=()
	for late in 500 2000 5000; do
		port=$((7490 + late / 1000))
		late_arg=()
		[ "$me" = b ] && late_arg=(--late-ms "$late")
		run "late$late" "$PEER_BIN" "${ping_args[@]}" --port "$port" \
			--peer-name "$other" --shared-host --start-ms "$start" \
			"${late_arg[@]}" --timeout-ms 60000 &
		pids+=($!)
	done
	wait "${pids[@]}"

	# 3c. the option set at each point of the call sequence, both ends
	#    alike, b 0 or 1 s after a (eight pairs at once, each pair
	#    starting together once both ends are set up)
	barrier optat >/dev/null
	counters >"$out/optat.before"
	pids=()
	port=7500
	for at in create bind addr route; do
		for skew in 0 1000; do
			skew_arg=()
			[ "$me" = b ] && skew_arg=(--delay-ms "$skew")
			mkdir -p "$sync_dir/optat-$at-$skew"
			run "optat-$at-$skew" "$PEER_BIN" "${ping_args[@]}" \
				--port "$port" --peer-name "$other" \
				--shared-host --opt-at "$at" "${skew_arg[@]}" \
				--sync-dir "$sync_dir/optat-$at-$skew" \
				--timeout-ms 60000 &
			pids+=($!)
			port=$((port + 1))
		done
	done
	wait "${pids[@]}"
	counters >"$out/optat.after"

	# 3d. on demand: a's rank listens on its port (the option set on the
	#    listener) and peer-connects from it to b's op; b's op only
	#    peer-connects, b's oc only connects client/server, both at once.
	#    All at the same time; a 1 s late (op's REQ is at a's listener
	#    first: a's rdma_connect() says EALREADY, a accepts it); b 1 s
	#    late (a's REQ is held at b until op connects)
	for t in same alate blate; do
		start=$(($(barrier "ondemand-$t") + ${PEER_MARGIN_MS:-4000}))
		delay=0
		case $me-$t in a-alate | b-blate) delay=1000 ;; esac
		od=("${PEER_BIN%/*}/peer_ranks" --local "$PEER_IP" --start-ms "$start"
		    --delay-ms "$delay" --timeout-ms 30000)
		if [ "$me" = a ]; then
			run "ondemand-$t-oa" "${od[@]}" --port 7800 --name oa \
				--listen --peer "$PEER_REMOTE:7810:op" \
				--peer "$PEER_REMOTE:7820:oc:a"
		else
			run "ondemand-$t-op" "${od[@]}" --port 7810 --name op \
				--peer "$PEER_REMOTE:7800:oa" &
			run "ondemand-$t-oc" "${od[@]}" --port 7820 --name oc \
				--peer "$PEER_REMOTE:7800:oa:c"
			wait
		fi
	done

	# 4. stock client/server: rping, no option set
	start=$(barrier rping)
	if [ "$me" = a ]; then
		run rping rping -s -a "$PEER_IP" -p 7482 -C 5 -S 64 -v
	else
		sleep 2
		run rping rping -c -a "$PEER_REMOTE" -p 7482 -C 5 -S 64 -v
	fi

	barrier done >/dev/null
	counters >"$out/counters.final"
}

ranks() {
	local nr=${PEER_RANKS:-4} base=7600 peer_base=7700 i j pids=() args=()

	[ "$me" = b ] && base=7700 peer_base=7600
	for j in $(seq 0 $((nr - 1))); do
		args+=(--peer "$PEER_REMOTE:$((peer_base + j)):$other$j")
	done
	counters >"$out/ranks.before"
	for i in $(seq 0 $((nr - 1))); do
		"${PEER_BIN%/*}/peer_ranks" --local "$PEER_IP" --port $((base + i)) \
			--name "$me$i" "${args[@]}" --start-ms "$start" \
			--rounds 3 --round-ms "${PEER_ROUND_MS:-6000}" \
			--timeout-ms "${PEER_RANK_TIMEOUT_MS:-4000}" \
			>"$out/ranks-$me$i.log" 2>&1 &
		pids+=($!)
	done
	for i in $(seq 0 $((nr - 1))); do
		wait "${pids[i]}"
		echo $? >"$out/ranks-$me$i.rc"
	done
	counters >"$out/ranks.after"
}

counters() { uml_counters; }
# peer_ping sets up (addr, route, QP) before the start time: give it ample
# time under KASAN
barrier() { uml_barrier "$sync_dir" "$me" "$other" "$1" "${PEER_MARGIN_MS:-4000}"; }

# rping_pair <name> <port>: an rping server on $PEER_IP:<port> and a
# client of it on this host; <name>.rc and <name>-client.rc
rping_pair() {
	local srv

	timeout 10 rping -s -a "$PEER_IP" -p "$2" -C 1 >"$out/$1.log" 2>&1 &
	srv=$!
	sleep 1
	timeout 10 rping -c -a "$PEER_IP" -p "$2" -C 1 >>"$out/$1.log" 2>&1
	echo $? >"$out/$1-client.rc"
	wait $srv
	echo $? >"$out/$1.rc"
}

# Scenario 3, host b, as user nobody against root: a peer listener's
# address and port is not shared with another user's rank; a peer bind
# on another address leaves a listen of the same port free; a stock
# client to a port with a peer id bound, not listening, is rejected at
# once.
owners() {
	local nl nb t0

	"${nobody[@]}" "${PEER_BIN%/*}/peer_ranks" --local "$PEER_IP" \
		--port 7486 --name nl --listen --peer "$PEER_REMOTE:7499:ghost:a" \
		--rounds 1 --start-ms "$(date +%s%3N)" --timeout-ms 6000 \
		>"$out/owner-listener.log" 2>&1 &
	nl=$!
	"${nobody[@]}" "$PEER_BIN" --local 198.18.0.4 --remote "$PEER_REMOTE" \
		--name nb --port 4421 --idle-ms 30000 \
		>"$out/other-addr-bind.log" 2>&1 &
	nb=$!
	sleep 2
	"${PEER_BIN%/*}/peer_ranks" --local "$PEER_IP" --port 7486 --name rr \
		--peer "$PEER_REMOTE:7486:x" --rounds 1 \
		--start-ms "$(date +%s%3N)" --timeout-ms 2000 \
		>"$out/owner.log" 2>&1
	rping_pair listen-beside 4421
	t0=$(date +%s%3N)
	timeout 40 rping -c -a 198.18.0.4 -p 4421 -C 1 -v \
		>"$out/stock-rej.log" 2>&1
	echo $? >"$out/stock-rej.rc"
	echo $(($(date +%s%3N) - t0)) >"$out/stock-rej.ms"
	wait $nl
	echo $? >"$out/owner-listener.rc"
	wait $nb
}

run() {	# run <scenario> <command...>: log, exit code, counters around it
	local scn=$1
	shift
	counters >"$out/$scn.before"
	"$@" >"$out/$scn.log" 2>&1
	echo $? >"$out/$scn.rc"
	counters >"$out/$scn.after"
}
