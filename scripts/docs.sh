#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# `make docs`: build Documentation/infiniband (with cm_peer.rst and the
# kernel-doc of the peer API it pulls in) with the kernel's own Sphinx
# set-up, `make SPHINXDIRS=infiniband htmldocs`, into build/docs.
# Passes when Sphinx and kernel-doc print no warning or error (the note
# that graphviz' dot is missing is not about our files and is ignored)
# and the page holds the kernel-doc of the exported functions.
# Prints "name<TAB>PASS|FAIL" lines; exit 1 when one fails.
set -uo pipefail
. "$(dirname "$0")/common.sh"

out=$BUILD/docs
log_file=$BUILD/docs.log
rm -rf "$out"
mkdir -p "$out"
rc=0
result() {	# result <name> <ok>
	printf 'docs/%s\t%s\n' "$1" "$([ "$2" = 1 ] && echo PASS || echo FAIL)"
	[ "$2" = 1 ] || rc=1
}

ok=0
if make -C "$SRC" O="$out" SPHINXDIRS=infiniband htmldocs \
	>"$log_file" 2>&1; then
	problems=$(grep -iE 'warning|error' "$log_file" |
		grep -v 'WARNING: dot(1) not found')
	if [ -z "$problems" ]; then
		ok=1
	else
		printf '%s\n' "$problems" >&2
	fi
else
	tail -n 30 "$log_file" >&2
fi
result htmldocs_infiniband_no_warnings $ok

page=$out/Documentation/output/infiniband/cm_peer.html
ok=1
for sym in ib_cm_peer_bind ib_send_cm_peer_req rdma_set_peer_to_peer \
	   cm_peer_arbitrate; do
	grep -q "id=\"c\.$sym\"" "$page" 2>/dev/null || {
		log "docs: no kernel-doc entry for $sym in ${page#"$TOP"/}"
		ok=0
	}
done
result kernel_doc_rendered $ok
[ $rc -ne 0 ] || log "docs: ${page#"$TOP"/}"
exit $rc
