#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Offline modversions check of a staged /lib/modules/<release> tree.

usage: modversions-check.py MODDIR DEBIAN_SYMVERS OUR_SYMVERS

MODDIR holds Debian's modules (kernel/) and ours (updates/cm-peer/, which
shadow the in-tree modules of the same name).  For our modules and for
every module that depends on one of them (modules.dep), each CRC in its
__versions table (modprobe --dump-modversions) must equal the CRC its
exporter was built with: ours for the symbols our modules export,
Debian's Module.symvers for the rest.  That is the check the kernel does
at load time.  A self-test first changes one expected CRC and must see
the mismatch.
"""
import os
import subprocess
import sys

OURS_DIR = 'updates/cm-peer/'


def read_symvers(path, only=None):
    table = {}
    with open(path) as f:
        for line in f:
            crc, sym, mod = line.split('\t')[:3]
            if only is None or os.path.basename(mod) in only:
                table[sym] = (int(crc, 16), mod)
    return table


def dump_versions(path):
    out = subprocess.run(['modprobe', '--dump-modversions', path],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        crc, sym = line.split()
        yield sym, int(crc, 16)


def mismatches(modules, moddir, exports):
    bad = []
    checked = 0
    for rel in modules:
        for sym, crc in dump_versions(os.path.join(moddir, rel)):
            if sym == 'module_layout' or sym not in exports:
                continue
            checked += 1
            want, exporter = exports[sym]
            if crc != want:
                bad.append('%s: %s %#010x, %s exports %#010x'
                           % (rel, sym, crc, exporter, want))
    return bad, checked


def main():
    moddir, deb_symvers, our_symvers = sys.argv[1:4]
    ours = sorted(f for f in os.listdir(os.path.join(moddir, OURS_DIR))
                  if f.endswith('.ko'))
    names = {f[:-3] for f in ours}
    exports = read_symvers(deb_symvers)
    for sym, (crc, mod) in read_symvers(our_symvers, names).items():
        exports[sym] = (crc, OURS_DIR + os.path.basename(mod))

    modules = [OURS_DIR + f for f in ours]
    with open(os.path.join(moddir, 'modules.dep')) as f:
        for line in f:
            mod, deps = line.split(':', 1)
            if any(d.startswith(OURS_DIR) for d in deps.split()):
                modules.append(mod)
    modules = sorted(set(modules))

    sym = next(s for s, (_, m) in exports.items() if m.startswith(OURS_DIR))
    crc, mod = exports[sym]
    exports[sym] = (crc ^ 1, mod)
    bad, _ = mismatches(modules, moddir, exports)
    exports[sym] = (crc, mod)
    if not bad:
        print('self-test: a changed CRC of %s was not noticed' % sym,
              file=sys.stderr)
        return 1

    bad, checked = mismatches(modules, moddir, exports)
    for b in bad:
        print(b, file=sys.stderr)
    print('modversions: %d modules, %d imported CRCs checked, %d mismatches'
          % (len(modules), checked, len(bad)), file=sys.stderr)
    return 1 if bad or not checked else 0


if __name__ == '__main__':
    sys.exit(main())
