#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Summarise kunit.py JSON results and project checks: a line per case,
then totals.

Usage: kunit-summary.py CHECKS.tsv RESULTS.json [RESULTS.json ...]

CHECKS.tsv holds further checks of the run, one per line as
"name<TAB>PASS|FAIL".  A case reported SKIP in one results file and run in
a later one (a suite run again through debugfs once its device exists)
counts once, with the later status.  A failed case's "log" lines (see
kunit-logs.py) are printed under it.  Prints "N passed, N failed" last and
exits 1 when anything failed or nothing ran.
"""
import json
import sys


def walk(node, path, out):
    here = path + [node.get("name", "")]
    for case in node.get("test_cases", []):
        out.append(("/".join(here + [case["name"]]), case["status"],
                    case.get("log", [])))
    for sub in node.get("sub_groups", []):
        walk(sub, here, out)


def load(path):
    with open(path) as f:
        root = json.load(f)
    out = []
    for case in root.get("test_cases", []):
        out.append((case["name"], case["status"], case.get("log", [])))
    for sub in root.get("sub_groups", []):
        walk(sub, [], out)
    return out


def main():
    results, logs = {}, {}
    for path in sys.argv[2:]:
        for name, status, log in load(path):
            if status == "SKIP" and name in results:
                continue
            results[name] = status
            logs[name] = log
    with open(sys.argv[1]) as f:
        for line in f:
            if line.strip():
                name, status = line.rstrip("\n").split("\t")
                results[name] = status
    passed = failed = skipped = 0
    for name, status in results.items():
        print(f"{status:5} {name}")
        if status not in ("PASS", "SKIP"):
            for line in logs.get(name, []):
                print(f"      | {line}")
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
