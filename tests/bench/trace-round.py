#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""One traced round of each kind, both hosts, on one time line.

usage: trace-round.py BENCH_DIR

Reads {a,b}/trace-{peer,held,cs}.txt (kernel trace with peer_bench's
"pb rR" markers, BENCH_ONLY=trace make bench) and the runs' .0.jsonl.
Picks the median held round of the held run (b connects 5 ms late), the
median collision round of the peer run (by the later ESTABLISHED of the
two ends) and the median round of the client/server run, and prints, for each, every CM, MAD and marker
event of both hosts and the scheduler's switches to and from peer_bench,
in ms from the round's common start (host clock, see load_trace()).  Writes BENCH_DIR/trace.md (CM, MAD and marker
events) and trace-sched.md (with the scheduler's events too).
"""
import collections
import json
import os
import re
import sys

LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')


def load_trace(path):
    """round -> [(ms from the round's start, comm, event, text)]

    A marker "pb rR @MS what" was written MS after the round's start by
    the host clock (peer_bench's); the trace's own clock is the UML
    kernel's, unrelated to the other host's: each round's events are
    placed on the host clock by the median of (trace time - MS) over its
    markers, which a late wake-up of one marker does not move.
    """
    raw = collections.defaultdict(list)
    cur = None
    if not os.path.exists(path):
        return {}
    for line in open(path):
        m = LINE.match(line)
        if not m:
            continue
        comm, _, _, ts, ev, rest = m.groups()
        t = float(ts) * 1e3
        if ev == 'tracing_mark_write':
            mm = re.match(r'pb r(\d+) @(-?[\d.]+) (.*)', rest)
            if mm:
                cur = int(mm.group(1))
                raw[cur].append((t, comm, 'mark', mm.group(3),
                                 float(mm.group(2))))
                continue
        if cur is None:
            continue
        if ev.startswith('sched_'):
            if 'peer_bench' not in rest:
                continue
            rest = re.sub(r'prev_prio=\S+ |next_prio=\S+|prio=\S+ ', '', rest)
        raw[cur].append((t, comm, ev, rest[:110], None))
    rounds = {}
    for r, evs in raw.items():
        offs = sorted(t - at for t, _, _, _, at in evs if at is not None)
        c = offs[(len(offs) - 1) // 2]
        rounds[r] = [(t - c, comm, ev, rest) for t, comm, ev, rest, _ in evs]
    return rounds


def load_ends(path):
    ends, rounds = {}, {}
    if os.path.exists(path):
        for line in open(path):
            rec = json.loads(line)
            (ends if 'pair' in rec else rounds)[rec['round']] = rec
    return ends, rounds


def pick(bdir, mode, kind):
    """(round, later ESTABLISHED ms) of the median round of @kind"""
    e = {h: load_ends(os.path.join(bdir, h, 'trace-%s.0.jsonl' % mode))
         for h in 'ab'}
    cand = []
    for r, ea in e['a'][0].items():
        eb = e['b'][0].get(r)
        if not eb or ea['est_ms'] < 0 or eb['est_ms'] < 0:
            continue
        ra, rb = e['a'][1].get(r, {}), e['b'][1].get(r, {})
        held = ra.get('claimed', 0) + rb.get('claimed', 0)
        matched = ra.get('matched', 0) + rb.get('matched', 0)
        k = 'held' if held else 'collision' if matched else 'cs'
        if k == kind:
            cand.append((max(ea['est_ms'], eb['est_ms']), r, ea, eb))
    if not cand:
        return None
    cand.sort()
    return cand[(len(cand) - 1) // 2], len(cand)


def timeline(bdir, mode, r):
    out = []
    for h in 'ab':
        rounds = load_trace(os.path.join(bdir, h, 'trace-%s.txt' % mode))
        for t, comm, ev, rest in rounds.get(r, []):
            out.append((t, h, comm, ev, rest))
    out.sort()
    return out


def main():
    bdir = sys.argv[1]
    md, full = [], []
    for mode, kind in (('held', 'held'), ('peer', 'collision'),
                       ('cs', 'cs')):
        got = pick(bdir, mode, kind)
        if not got:
            md += ['No %s round in the %s run.' % (kind, mode), '']
            full += md[-2:]
            continue
        (t, r, ea, eb), n = got
        md += ['### %s: round %d (median of %d such rounds), both ends '
               'ESTABLISHED at %.3f ms' % (kind, r, n, t), '',
               'a: rdma_connect at %.3f ms, ESTABLISHED at %.3f ms; '
               'b: %.3f ms, %.3f ms (ms from the common start)' %
               (ea['conn_ms'], ea['est_ms'], eb['conn_ms'], eb['est_ms']),
               '', '```']
        full += md[-5:]
        for dt, h, comm, ev, rest in timeline(bdir, mode, r):
            if dt < -5 or dt > t + 5:
                continue
            line = '%9.3f %s %-16.16s %-26s %s' % (dt, h, comm, ev, rest)
            full.append(line)
            if not ev.startswith('sched_'):
                md.append(line)
        md += ['```', '']
        full += ['```', '']
    text = '\n'.join(md) + '\n'
    for name, lines in (('trace.md', md), ('trace-sched.md', full)):
        with open(os.path.join(bdir, name), 'w') as f:
            f.write('\n'.join(lines) + '\n')
    print(text)


if __name__ == '__main__':
    main()
