#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# End-to-end test with stock librdmacm/libibverbs: two UML hosts (the
# KUnit kernel of build/uml, hostfs root, so Debian's libraries run as
# they are) joined by a UML vector device over UDP on 127.0.0.1, each with
# soft-RoCE on it: distinct GIDs ::ffff:198.18.0.1 and ::ffff:198.18.0.2.
# tests/e2e/uml-e2e-init.sh runs the scenarios on both; check-e2e.py turns
# their logs and cm_peer counters into checks (build/results/checks-e2e.tsv).
set -uo pipefail
. "$(dirname "$0")/../../scripts/common.sh"
. "$(dirname "$0")/../uml-pair.sh"

RESULTS=$BUILD/results
E2E=$RESULTS/e2e
rm -rf "$E2E"
mkdir -p "$E2E/a" "$E2E/b" "$E2E/sync"
[ -x "$UML_OUT/linux" ] || die "no UML kernel; run scripts/run-kunit.sh first"
uml_userspace_check "$UML_OUT/linux" "$E2E" || {
	printf 'e2e/uml_userspace_runs\tFAIL\n' >"$RESULTS/checks-e2e.tsv"
	die "UML user space does not run: no e2e"
}

log "building peer_ping and peer_ranks against Debian's librdmacm"
"$TOP/tests/e2e/build-tools.sh" || die "e2e programs build"

log "booting UML hosts a (198.18.0.1) and b (198.18.0.2)"
uml_pair "$UML_OUT/linux" "${E2E_TIMEOUT:-420}" "$E2E" "$E2E/sync" \
	"$TOP/tests/e2e/uml-e2e-init.sh" mem=768M PEER_BIN="$BUILD/peer_ping"

python3 "$TOP/tests/e2e/check-e2e.py" "$E2E" >"$RESULTS/checks-e2e.tsv"
rc=$?
cat "$E2E/report.txt"
cat "$RESULTS/checks-e2e.tsv"
exit $rc
