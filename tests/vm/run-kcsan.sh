#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# `make stress-kcsan` (not part of `make test`): tests/vm/run-smp.sh with
# KCSAN, the kernel's data-race detector, instead of KASAN
# (tests/vm/smp.config + tests/vm/smp-kcsan.config, build dir
# build/smp-kcsan, results build/results/smp-kcsan/, checks smp-kcsan/...),
# the race suite at KCSAN_RACE_ROUNDS rounds (default 500), the e2e with
# longer margins (KCSAN slows the guests more than KASAN).  Every KCSAN
# report fails the console checks; kcsan-summary.txt lists the distinct
# races, marking those with a function of the RDMA core
# (drivers/infiniband/core) or of rxe in either stack.
set -uo pipefail
. "$(dirname "$0")/../../scripts/common.sh"

OUT=$BUILD/results/smp-kcsan
SMP_NAME=smp-kcsan SMP_OUT=$BUILD/smp-kcsan \
SMP_FRAGMENTS="$TOP/tests/vm/smp.config $TOP/tests/vm/smp-kcsan.config" \
SMP_KUNIT_ARGS="cm_peer_ib_test.race_rounds=${KCSAN_RACE_ROUNDS:-500} ${SMP_KUNIT_ARGS:-}" \
SMP_E2E_ARGS="PEER_MARGIN_MS=15000 PEER_EARLY_MS=3000 PEER_IDLE_MS=40000 PEER_COLLIDE_DELAY_MS=250 PEER_ROUND_MS=60000 PEER_RANK_TIMEOUT_MS=40000" \
	"$TOP/tests/vm/run-smp.sh"
rc=$?

# which object defines each function: nm of the build's objects
nm_map=$(mktemp)
trap 'rm -f "$nm_map"' EXIT
for dir in drivers/infiniband/core drivers/infiniband/sw/rxe; do
	for o in "$BUILD/smp-kcsan/$dir"/*.o; do
		[ -e "$o" ] || continue
		nm --defined-only "$o" 2>/dev/null |
			awk -v f="$dir/$(basename "$o" .o).c" '$2 ~ /^[tT]$/ { print $3, f }'
	done
done >"$nm_map"
python3 - "$nm_map" "$OUT" >"$OUT/kcsan-summary.txt" <<'PY'
import glob, os, re, sys
where = {}
for line in open(sys.argv[1]):
    fn, f = line.split()
    where.setdefault(fn, f)
races = {}
for con in sorted(glob.glob(os.path.join(sys.argv[2], "**", "*.console"),
                            recursive=True)):
    lines = open(con, errors="replace").read().splitlines()
    for i, line in enumerate(lines):
        m = re.search(r"BUG: KCSAN: (.*)", line)
        if not m:
            continue
        files = set()
        for frame in lines[i + 1:i + 60]:
            if "=====" in frame:
                break
            f = re.search(r"\s([a-z_][a-z0-9_.]*)\+0x", frame)
            if f and f.group(1).split(".")[0] in where:
                files.add(where[f.group(1).split(".")[0]])
        key = m.group(1).strip()
        r = races.setdefault(key, {"n": 0, "files": set(),
                                   "first": f"{os.path.relpath(con, sys.argv[2])}:{i + 1}"})
        r["n"] += 1
        r["files"] |= files
print(f"{len(races)} distinct KCSAN reports")
for key, r in sorted(races.items(), key=lambda kv: (not kv[1]["files"], kv[0])):
    tag = "RDMA" if r["files"] else "    "
    print(f"{tag} {r['n']:3}x {key}  [{', '.join(sorted(r['files'])) or 'elsewhere'}]"
          f"  first: {r['first']}")
PY
cat "$OUT/kcsan-summary.txt"
exit $rc
