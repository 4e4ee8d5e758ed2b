#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Turn a `make bench` run (build/results/bench) into results.

usage: bench-report.py BENCH_DIR

Reads a/ and b/ (per-host peer_bench JSON lines and CM counters around
each run) and hotpath.txt (the KUnit suite's "bench:" lines).  A
connection is one (run, round, pair); its set-up time is the later of its
two ends' ESTABLISHED times, from the round's common start.  It counts as
formed when both ends report it established and each end's QPN is the
one the other end got in the private data (one RC connection, not two).

Writes bench.json, latency.csv, latency.png (gnuplot, when installed) and
summary.md into BENCH_DIR and prints summary.md.
"""
import collections
import glob
import json
import os
import shutil
import subprocess
import sys

CONNECT_MADS = ('req', 'rep', 'rtu', 'mra', 'rej')


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def counters(path):
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                k, _, v = line.partition(' ')
                try:
                    out[k] = int(v)
                except ValueError:
                    pass
    return out


def load_run(bdir, run):
    ends, rounds = [], []
    for host in ('a', 'b'):
        for path in glob.glob(os.path.join(bdir, host, run + '.*.jsonl')):
            with open(path) as f:
                for line in f:
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue
                    (ends if 'pair' in rec else rounds).append(rec)
    mads = collections.Counter()
    for host in ('a', 'b'):
        before = counters(os.path.join(bdir, host, run + '.before'))
        after = counters(os.path.join(bdir, host, run + '.after'))
        for k, v in after.items():
            # counted where they arrive: ib_cm's cm_tx_msgs counts a
            # response sent without a cm_id (the MRA for a held REQ, as
            # its MRA for a duplicate REQ) twice, as sent and as retried
            if k.startswith('cm_rx_msgs/'):
                mads[k.split('/', 1)[1]] += v - before.get(k, 0)
    return ends, rounds, mads


def analyse(bdir, run, npairs_per_round):
    ends, rounds, mads = load_run(bdir, run)
    by_conn = collections.defaultdict(list)
    for e in ends:
        by_conn[(e['round'], e['pair'])].append(e)
    path_of = collections.defaultdict(set)
    for r in rounds:
        if r.get('matched'):
            path_of[r['round']].add('collision')
        if r.get('claimed'):
            path_of[r['round']].add('held')
    nrounds = len({e['round'] for e in ends}) or 0
    lat, formed, failed, inconsistent, per_round = [], 0, 0, 0, {}
    rows = []
    for (rnd, pair), es in sorted(by_conn.items()):
        ok = len(es) == 2 and all(e['ok'] for e in es)
        if ok and not (es[0]['qpn'] == es[1]['peer_qpn'] and
                       es[1]['qpn'] == es[0]['peer_qpn']):
            inconsistent += 1
            ok = False
        if not ok:
            failed += 1
            continue
        formed += 1
        t = max(e['est_ms'] for e in es)
        lat.append(t)
        per_round[rnd] = max(per_round.get(rnd, 0), t)
        path = '+'.join(sorted(path_of.get(rnd, ()))) or '-'
        rows.append((run, rnd, pair, t, path))
    expected = nrounds * npairs_per_round
    res = {
        'run': run, 'rounds': nrounds, 'expected': expected,
        'formed': formed, 'failed': expected - formed,
        'inconsistent': inconsistent,
        'p50_ms': pct(lat, 50), 'p99_ms': pct(lat, 99),
        'mean_ms': sum(lat) / len(lat) if lat else None,
        'total_ms': max(per_round.values()) if per_round else None,
        'mads_per_conn': {k: round(mads[k] / formed, 2) if formed else None
                          for k in CONNECT_MADS + ('dreq', 'drep')},
    }
    res['connect_mads_per_conn'] = (round(sum(mads[k] for k in CONNECT_MADS)
                                          / formed, 2) if formed else None)
    if run.startswith('pair-peer'):
        paths = collections.Counter('+'.join(sorted(path_of.get(r, ())))
                                    or 'none' for r in per_round)
        res['paths'] = dict(paths)
        for p in ('collision', 'held'):
            sel = [t for (_, rnd, _, t, pa) in rows if pa == p]
            res['p50_ms_' + p] = pct(sel, 50)
    return res, rows


def ratio(a, b):
    return round(a / b, 3) if a is not None and b else None


def fmt(v, unit=''):
    return '-' if v is None else ('%.2f%s' % (v, unit) if isinstance(v, float)
                                  else '%s%s' % (v, unit))


def main():
    bdir = sys.argv[1]
    result = {'conditions': {}, 'pair': {}, 'storm': {}}
    for host in ('a', 'b'):
        p = os.path.join(bdir, host, 'conditions.txt')
        if os.path.exists(p):
            result['conditions'][host] = open(p).read().strip()
    result['conditions']['rounds'] = os.environ.get('BENCH_ROUNDS', '200')
    result['conditions']['delay_us'] = os.environ.get('BENCH_DELAY_US', '0')

    rows = []
    for mode in ('peer', 'cs', 'wa'):
        res, r = analyse(bdir, 'pair-' + mode, 1)
        result['pair'][mode] = res
        rows += r
    pp, pc, pw = (result['pair'][m] for m in ('peer', 'cs', 'wa'))
    result['pair']['ratios'] = {
        'peer/cs p50': ratio(pp['p50_ms'], pc['p50_ms']),
        'peer/cs p99': ratio(pp['p99_ms'], pc['p99_ms']),
        'wa/cs p50': ratio(pw['p50_ms'], pc['p50_ms']),
        'wa/cs p99': ratio(pw['p99_ms'], pc['p99_ms']),
    }
    sizes = sorted({int(os.path.basename(p).split('-')[1])
                    for p in glob.glob(os.path.join(bdir, 'a', 'storm-*'))})
    for n in sizes:
        npairs = n * (n - 1) // 2
        s = {}
        for mode in ('peer', 'wa'):
            s[mode], r = analyse(bdir, 'storm-%d-%s' % (n, mode), npairs)
            rows += r
        s['pairs'] = npairs
        s['peer/wa total'] = ratio(s['peer']['total_ms'], s['wa']['total_ms'])
        result['storm'][str(n)] = s
    for name in ('hotpath', 'reqpath'):
        result[name] = read_bench_lines(os.path.join(bdir, name + '.txt'))

    with open(os.path.join(bdir, 'bench.json'), 'w') as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(bdir, 'latency.csv'), 'w') as f:
        f.write('run,round,pair,setup_ms,path\n')
        for row in rows:
            f.write('%s,%d,%d,%.3f,%s\n' % row)

    md = ['Single pair (%s rounds each, set-up time = later ESTABLISHED of '
          'the two ends from a common start; MADs counted by the receiving CM):'
          % result['conditions']['rounds'],
          '', '| mode | formed/expected | p50 ms | p99 ms | connect MADs/conn |'
          ' REQ | REP | RTU | MRA |', '|---|---|---|---|---|---|---|---|---|']
    for mode, label in (('peer', 'peer (a)'),
                        ('cs', 'client/server (b)'),
                        ('wa', 'workaround (c)')):
        r = result['pair'][mode]
        m = r['mads_per_conn']
        md.append('| %s | %d/%d | %s | %s | %s | %s | %s | %s | %s |' % (
            label, r['formed'], r['expected'], fmt(r['p50_ms']),
            fmt(r['p99_ms']), fmt(r['connect_mads_per_conn']), fmt(m['req']),
            fmt(m['rep']), fmt(m['rtu']), fmt(m['mra'])))
    rt = result['pair']['ratios']
    md += ['', 'Ratios: a/b p50 %s, p99 %s; c/b p50 %s, p99 %s.' % (
        fmt(rt['peer/cs p50']), fmt(rt['peer/cs p99']),
        fmt(rt['wa/cs p50']), fmt(rt['wa/cs p99'])),
        'Peer rounds by path: %s (p50 collision %s ms, held %s ms).' % (
        pp.get('paths'), fmt(pp.get('p50_ms_collision')),
        fmt(pp.get('p50_ms_held'))), '']
    if result['storm']:
        md += ['Storm (every pair of N endpoints connects at once, both '
               'hosts):', '',
               '| N | pairs | peer: formed, failed, total ms | '
               'workaround: formed, failed, total ms | peer/workaround |',
               '|---|---|---|---|---|']
        for n, s in result['storm'].items():
            md.append('| %s | %d | %d, %d, %s | %d, %d, %s | %s |' % (
                n, s['pairs'], s['peer']['formed'], s['peer']['failed'],
                fmt(s['peer']['total_ms']), s['wa']['formed'],
                s['wa']['failed'], fmt(s['wa']['total_ms']),
                fmt(s['peer/wa total'])))
        md.append('')
    if result['hotpath']:
        md += ['Hot path (KUnit cm_peer_bench, ns per call):', '',
               '| case | ns |', '|---|---|']
        md += ['| %s | %.2f |' % kv for kv in result['hotpath'].items()]
        md.append('')
    if result['reqpath']:
        md += ['REQ path (KUnit cm_peer_req_bench, ns per inbound REQ; '
               'ratio = (case - drop) / (cs - drop), the CM\'s share):',
               '', '| case | ns or ratio |', '|---|---|']
        md += ['| %s | %.2f |' % kv for kv in result['reqpath'].items()]
    text = '\n'.join(md) + '\n'
    with open(os.path.join(bdir, 'summary.md'), 'w') as f:
        f.write(text)
    print(text)
    plot(bdir, rows)


def read_bench_lines(path):
    """'bench: <name> n=<n> <value>' lines -> {'<name> n=<n>': value}"""
    out = {}
    if os.path.exists(path):
        for line in open(path):
            parts = line.split()
            if len(parts) == 4 and parts[0] == 'bench:':
                out['%s %s' % (parts[1], parts[2])] = float(parts[3])
    return out


def plot(bdir, rows):
    if not shutil.which('gnuplot'):
        print('gnuplot not installed: no latency.png', file=sys.stderr)
        return
    series = []
    for run in ('pair-peer', 'pair-cs', 'pair-wa'):
        vals = sorted(t for (r, _, _, t, _) in rows if r == run)
        if not vals:
            continue
        path = os.path.join(bdir, run + '.cdf')
        with open(path, 'w') as f:
            for i, v in enumerate(vals):
                f.write('%.3f %.4f\n' % (v, (i + 1) / len(vals)))
        series.append("'%s' using 1:2 with steps lw 2 title '%s'"
                      % (path, run))
    script = ("set terminal png size 800,500\n"
              "set output '%s'\n"
              "set title 'Connection set-up time, single pair (CDF)'\n"
              "set xlabel 'ms from the common start to ESTABLISHED on both'\n"
              "set ylabel 'fraction of connections'\n"
              "set key bottom right\nset grid\n"
              "plot %s\n" % (os.path.join(bdir, 'latency.png'),
                             ', '.join(series)))
    subprocess.run(['gnuplot'], input=script, text=True, check=False)


if __name__ == '__main__':
    main()
