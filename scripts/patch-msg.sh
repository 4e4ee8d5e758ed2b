#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# patch-msg.sh <patch>: the commit message of a git format-patch file: its
# Subject (unfolded, without "[PATCH ...]"), a blank line, the body up to
# the "---" line.
awk '
	hdr == 0 && /^Subject: / { sub(/^Subject: (\[[^]]*\] )?/, ""); subj = $0; hdr = 1; next }
	hdr == 1 && /^[ \t]/ { subj = subj $0; next }
	hdr == 1 && /^$/ { print subj; print ""; hdr = 2; next }
	hdr == 1 { next }
	hdr == 2 && /^---$/ { exit }
	hdr == 2 { print }
' "$1"
