#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# End-to-end test with stock librdmacm/libibverbs: two UML hosts (the
# KUnit kernel of build/uml, hostfs root, so Debian's libraries run as
# they are) joined by a UML vector device over UDP on 127.0.0.1, each with
# soft-RoCE on it: distinct GIDs ::ffff:198.18.0.1 and ::ffff:198.18.0.2.
# tests/e2e/uml-e2e-init.sh runs the scenarios on both; check-e2e.py turns
# their logs and cm_p2p counters into checks (build/results/checks-e2e.tsv).
set -uo pipefail
. "$(dirname "$0")/../../scripts/common.sh"

RESULTS=$BUILD/results
E2E=$RESULTS/e2e
rm -rf "$E2E"
mkdir -p "$E2E/a" "$E2E/b" "$E2E/sync"
[ -x "$UML_OUT/linux" ] || die "no UML kernel; run scripts/run-kunit.sh first"

log "building p2p_ping against Debian's librdmacm"
gcc -O2 -Wall -Wextra -Werror -o "$BUILD/p2p_ping" \
	"$TOP/tests/e2e/p2p_ping.c" -lrdmacm -libverbs || die "p2p_ping build"

# two UDP ports on 127.0.0.1 for the l2tpv3 link
p1=$((20000 + RANDOM % 20000))
p2=$((p1 + 1))
boot() {	# boot <name> <ip> <peer ip> <src port> <dst port>
	timeout --kill-after=15 "${E2E_TIMEOUT:-420}" "$UML_OUT/linux" \
		mem=768M console=tty kunit.enable=0 \
		rootfstype=hostfs rootflags=/ rw \
		init="$TOP/tests/e2e/uml-e2e-init.sh" \
		P2P_NAME="$1" P2P_IP="$2" P2P_PEER="$3" P2P_OUT="$E2E/$1" \
		P2P_SYNC="$E2E/sync" P2P_BIN="$BUILD/p2p_ping" \
		"vec0:transport=l2tpv3,udp=1,src=127.0.0.1,dst=127.0.0.1,srcport=$4,dstport=$5,depth=128,rx_session=0xffff,tx_session=0xffff" \
		</dev/null >"$E2E/$1.console" 2>&1
	echo $? >"$E2E/$1.exit"
}

log "booting UML hosts a (198.18.0.1) and b (198.18.0.2)"
start=$(date +%s)
boot a 198.18.0.1 198.18.0.2 "$p1" "$p2" &
boot b 198.18.0.2 198.18.0.1 "$p2" "$p1" &
wait
stty sane 2>/dev/null || true
log "hosts done after $(($(date +%s) - start)) s"

python3 "$TOP/tests/e2e/check-e2e.py" "$E2E" >"$RESULTS/checks-e2e.tsv"
rc=$?
cat "$E2E/report.txt"
cat "$RESULTS/checks-e2e.tsv"
exit $rc
