#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Attach to each failed case of a kunit.py JSON file the diagnostic lines
KTAP printed before its "not ok" line, so that the tally shows why a case
failed (kunit-summary.py prints them under its FAIL line).

Usage: kunit-logs.py RESULTS.json KTAP_OR_CONSOLE
"""
import json
import re
import sys

RESULT = re.compile(r"^\s*(not ok|ok) \d+ (\S+)")
DIAG = re.compile(r"^\s*#\s*(.*)$|^\s{4,}(\S.*)$")


def failures(path):
    """{case name: [diagnostic lines]} of the cases reported "not ok"."""
    logs, pending = {}, []
    with open(path, errors="replace") as f:
        for line in f:
            line = re.sub(r"^\[[^\]]*\]\s?", "", line.rstrip("\n"))
            m = RESULT.match(line)
            if m:
                if m.group(1) == "not ok" and pending:
                    logs.setdefault(m.group(2), pending)
                pending = []
                continue
            d = DIAG.match(line)
            if d and not line.lstrip().startswith(("KTAP", "# Subtest")):
                pending.append((d.group(1) or d.group(2)).strip())
    return logs


def attach(node, logs):
    for case in node.get("test_cases", []):
        if case.get("status") not in ("PASS", "SKIP"):
            name = case["name"].rsplit("/", 1)[-1]
            if name in logs:
                case["log"] = logs[name][-12:]
    for sub in node.get("sub_groups", []):
        attach(sub, logs)


def main():
    with open(sys.argv[1]) as f:
        root = json.load(f)
    attach(root, failures(sys.argv[2]))
    with open(sys.argv[1], "w") as f:
        json.dump(root, f, indent=1)


if __name__ == "__main__":
    main()
