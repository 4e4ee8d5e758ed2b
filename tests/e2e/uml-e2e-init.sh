#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# PID 1 of one of the two UML hosts of the end-to-end test (hostfs root).
# From the kernel command line: PEER_NAME (a|b), PEER_IP, PEER_REMOTE,
# PEER_OUT (this host's result folder), PEER_SYNC (folder shared by both
# hosts for barriers), PEER_BIN (peer_ping).  Runs the scenarios of
# tests/e2e/scenarios.sh over vec0, each started at the same moment on
# both hosts (UML reads the host clock), then a kmemleak scan, and powers
# off.
. "$(dirname "$0")/../uml-lib.sh"
. "$(dirname "$0")/scenarios.sh"
uml_mount
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# (no tmpfs on /tmp: the checkout, and so PEER_OUT, may live below it)

e2e_begin
if [ ! -x "$PEER_BIN" ] || [ ! -d "$sync_dir" ]; then
	echo "missing $PEER_BIN or $sync_dir: nothing to run" >&2
	uml_finish "$out"
fi
set -x

e2e_scenarios
uml_finish "$out"
