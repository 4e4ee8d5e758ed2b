#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Summarise kunit.py's JSON results: one line per case, then totals.

Usage: kunit-summary.py RESULTS.json [EXTRA.tsv]

EXTRA.tsv holds further checks of the run, one per line as
"name<TAB>PASS|FAIL".  Prints "N passed, N failed" last and exits 1 when
anything failed or nothing ran.
"""
import json
import sys


def walk(node, path, out):
    name = node.get("name", "")
    here = path + [name] if name else path
    cases = node.get("test_cases", [])
    subs = node.get("sub_groups", [])
    for case in cases:
        out.append(("/".join(here + [case["name"]]), case["status"]))
    for sub in subs:
        walk(sub, here, out)


def main():
    with open(sys.argv[1]) as f:
        root = json.load(f)
    results = []
    for case in root.get("test_cases", []):
        results.append((case["name"], case["status"]))
    for sub in root.get("sub_groups", []):
        walk(sub, [], results)
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as f:
            for line in f:
                name, status = line.rstrip("\n").split("\t")
                results.append((name, status))
    passed = failed = skipped = 0
    for name, status in results:
        print(f"{status:5} {name}")
        if status == "PASS":
            passed += 1
        elif status == "SKIP":
            skipped += 1
        else:
            failed += 1
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
