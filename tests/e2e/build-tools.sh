#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build the e2e programs (peer_ping, peer_ranks) into build/ against
# Debian's librdmacm, and tests/rds/rds_storm (AF_RDS); the UML,
# Debian-kernel and SMP stages run them.
set -euo pipefail
. "$(dirname "$0")/../../scripts/common.sh"

for prog in peer_ping peer_ranks; do
	gcc -O2 -Wall -Wextra -Werror -o "$BUILD/$prog" \
		-I"$TOP/tests" "$TOP/tests/e2e/$prog.c" -lrdmacm -libverbs
done
gcc -O2 -Wall -Wextra -Werror -o "$BUILD/rds_storm" -I"$TOP/tests" \
	"$TOP/tests/rds/rds_storm.c"
