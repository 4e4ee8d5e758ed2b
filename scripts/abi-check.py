#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Debian ABI check for the host modules built by scripts/build-host.sh.

Usage: abi-check.py OURS_MODULE_SYMVERS DEBIAN_MODULE_SYMVERS KRELEASE KO...

 - every symbol we export that Debian's Module.symvers also has must have
   the same CRC, or in-tree ULPs built against Debian refuse to load;
 - every symbol Debian exports from the modules we replace must still be
   exported by ours;
 - each .ko's vermagic must be "KRELEASE SMP preempt mod_unload modversions".

Prints one "name<TAB>PASS|FAIL" line per check (for kunit-summary.py) and
the details on stderr.  Exits 1 when a check failed.
"""
import os
import subprocess
import sys


def symvers(path):
    syms = {}
    with open(path) as f:
        for line in f:
            crc, sym, mod = line.rstrip("\n").split("\t")[:3]
            syms[sym] = (crc, os.path.basename(mod))
    return syms


def main():
    ours_path, theirs_path, krelease = sys.argv[1:4]
    kos = sys.argv[4:]
    ours, theirs = symvers(ours_path), symvers(theirs_path)
    built = {os.path.basename(k).split(".ko")[0] for k in kos}
    results = []
    prefix = os.environ.get("ABI_PREFIX", "abi")

    matched = [s for s in ours if s in theirs and ours[s][0] == theirs[s][0]]
    differ = [s for s in ours if s in theirs and ours[s][0] != theirs[s][0]]
    new = sorted(s for s in ours if s not in theirs)
    lost = sorted(s for s, (_, mod) in theirs.items()
                  if mod in built and s not in ours)
    for s in differ:
        print(f"CRC differs: {s}: ours {ours[s][0]} debian {theirs[s][0]}",
              file=sys.stderr)
    for s in lost:
        print(f"export lost: {s}", file=sys.stderr)
    print(f"abi: {len(matched)} exported symbols match Debian's CRC, "
          f"{len(differ)} differ, {len(lost)} lost, {len(new)} new"
          + (f" ({', '.join(new)})" if new else ""), file=sys.stderr)
    results.append((f"{prefix}/export_crcs_match_debian",
                    not differ and len(matched) > 0))
    results.append((f"{prefix}/no_export_lost", not lost))

    want = f"{krelease} SMP preempt mod_unload modversions"
    bad = []
    for ko in kos:
        vm = subprocess.run(["modinfo", "-F", "vermagic", ko], check=True,
                            capture_output=True, text=True).stdout.strip()
        if vm != want:
            bad.append(f"{os.path.basename(ko)}: '{vm}'")
    for b in bad:
        print(f"vermagic differs from '{want}': {b}", file=sys.stderr)
    print(f"abi: vermagic '{want}' on {len(kos) - len(bad)}/{len(kos)} "
          "modules", file=sys.stderr)
    results.append((f"{prefix}/vermagic_is_debian", bool(kos) and not bad))

    for name, ok in results:
        print(f"{name}\t{'PASS' if ok else 'FAIL'}")
    sys.exit(0 if all(ok for _, ok in results) else 1)


if __name__ == "__main__":
    main()
