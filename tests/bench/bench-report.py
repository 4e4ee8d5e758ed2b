#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Turn a `make bench` run (build/results/bench) into results.

usage: bench-report.py BENCH_DIR

Reads one folder per host, a/, b/ and so on (per-host peer_bench JSON
lines and CM counters around each run) and hotpath.txt (the KUnit suite's
"bench:" lines).  A
connection is one (run, round, pair); its set-up time is the later of its
two ends' ESTABLISHED times, from the round's common start.  It counts as
formed when both ends report it established and each end's QPN is the
one the other end got in the private data (one RC connection, not two).

Writes bench.json, latency.csv, latency.png (gnuplot, when installed) and
summary.md into BENCH_DIR and prints summary.md.  The storms' targets,
on all usable: peer <= BENCH_TARGET_WA x the workaround (default 0.6) and
<= BENCH_TARGET_CS x client/server (default 1.0).
"""
import collections
import glob
import json
import os
import shutil
import subprocess
import sys

CONNECT_MADS = ('req', 'rep', 'rtu', 'mra', 'rej')
TARGET_WA = float(os.environ.get('BENCH_TARGET_WA', '0.6'))
TARGET_CS = float(os.environ.get('BENCH_TARGET_CS', '1.0'))
TARGET_FLOOD = 1.2
HOSTS = ('a', 'b')     # main() sets the run's hosts: the folders a/, b/, ...


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
    for host in HOSTS:
        for path in glob.glob(os.path.join(bdir, host, run + '.*.jsonl')):
            with open(path) as f:
                for line in f:
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue
                    (ends if 'pair' in rec else rounds).append(rec)
    mads = collections.Counter()
    for host in HOSTS:
        before = counters(os.path.join(bdir, host, run + '.before'))
        after = counters(os.path.join(bdir, host, run + '.after'))
        for k, v in after.items():
            # counted where they arrive: ib_cm's cm_tx_msgs counts a
            # response sent without a cm_id (the MRA for a resent held
            # REQ, as its MRA for a duplicate REQ) twice, as sent and as
            # retried
            if k.startswith('cm_rx_msgs/'):
                mads[k.split('/', 1)[1]] += v - before.get(k, 0)
    return ends, rounds, mads


HELD_DELAY_MS = 5      # uml-bench-init.sh: b connects that late in pair-held


def analyse(bdir, run, npairs_per_round, offset_ms=0.0):
    """set-up times from @offset_ms after the start (the later connect)"""
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
        t = max(e['est_ms'] for e in es) - offset_ms
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
    if run.startswith('pair-peer') or run.startswith('pair-held'):
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


def pair_md(pair):
    pp = pair['peer']
    md = ['Single pair (%s rounds each, set-up time = later ESTABLISHED of '
          'the two ends from a common start; MADs counted by the receiving '
          'CM):' % pp['expected'], '',
          '| mode | formed/expected | p50 ms | p99 ms | connect MADs/conn |'
          ' REQ | REP | RTU | MRA |', '|---|---|---|---|---|---|---|---|---|']
    for mode, label in (('peer', 'peer (a)'),
                        ('cs', 'client/server (b)'),
                        ('wa', 'workaround (c)'),
                        ('held', 'peer, held (b connects %d ms late; '
                         'time from then)' % HELD_DELAY_MS)):
        r = pair[mode]
        m = r['mads_per_conn']
        md.append('| %s | %d/%d | %s | %s | %s | %s | %s | %s | %s |' % (
            label, r['formed'], r['expected'], fmt(r['p50_ms']),
            fmt(r['p99_ms']), fmt(r['connect_mads_per_conn']), fmt(m['req']),
            fmt(m['rep']), fmt(m['rtu']), fmt(m['mra'])))
    rt = pair['ratios']
    md += ['', 'Ratios: a/b p50 %s, p99 %s; c/b p50 %s, p99 %s; '
           'held/b p50 %s, p99 %s.' % (
               fmt(rt['peer/cs p50']), fmt(rt['peer/cs p99']),
               fmt(rt['wa/cs p50']), fmt(rt['wa/cs p99']),
               fmt(rt['held/cs p50']), fmt(rt['held/cs p99'])),
        'Peer rounds by path: %s (p50 collision %s ms, held %s ms).' % (
        pp.get('paths'), fmt(pp.get('p50_ms_collision')),
        fmt(pp.get('p50_ms_held'))),
        'Held-mode rounds by path: %s (p50 held %s ms, collision %s ms).' % (
        pair['held'].get('paths'),
        fmt(pair['held'].get('p50_ms_held')),
        fmt(pair['held'].get('p50_ms_collision'))), '']
    return md


def main():
    global HOSTS
    bdir = sys.argv[1]
    HOSTS = tuple(h for h in 'abcdefgh'
                  if os.path.isdir(os.path.join(bdir, h)))
    result = {'conditions': {}, 'pair': {}, 'storm': {}}
    for host in HOSTS:
        p = os.path.join(bdir, host, 'conditions.txt')
        if os.path.exists(p):
            result['conditions'][host] = open(p).read().strip()
    result['conditions']['rounds'] = os.environ.get('BENCH_ROUNDS', '200')
    result['conditions']['delay_us'] = os.environ.get('BENCH_DELAY_US', '0')
    for k in ('BENCH_DATE', 'BENCH_COMMIT', 'BENCH_MACHINE'):
        result['conditions'][k[6:].lower()] = os.environ.get(k, '?')

    rows = []
    for mode in ('peer', 'cs', 'wa', 'held'):
        res, r = analyse(bdir, 'pair-' + mode, 1,
                         HELD_DELAY_MS if mode == 'held' else 0)
        result['pair'][mode] = res
        rows += r
    pp, pc, pw, ph = (result['pair'][m] for m in ('peer', 'cs', 'wa', 'held'))
    result['pair']['ratios'] = {
        'held/cs p50': ratio(ph['p50_ms'], pc['p50_ms']),
        'held/cs p99': ratio(ph['p99_ms'], pc['p99_ms']),
        'peer/cs p50': ratio(pp['p50_ms'], pc['p50_ms']),
        'peer/cs p99': ratio(pp['p99_ms'], pc['p99_ms']),
        'wa/cs p50': ratio(pw['p50_ms'], pc['p50_ms']),
        'wa/cs p99': ratio(pw['p99_ms'], pc['p99_ms']),
    }
    result['storm'] = storms(bdir)
    result['flood'] = floods(bdir)
    for name in ('hotpath', 'reqpath'):
        result[name] = read_bench_lines(os.path.join(bdir, name + '.txt'))

    with open(os.path.join(bdir, 'bench.json'), 'w') as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(bdir, 'latency.csv'), 'w') as f:
        f.write('run,round,pair,setup_ms,path\n')
        for row in rows:
            f.write('%s,%d,%d,%.3f,%s\n' % row)

    c = result['conditions']
    head = '`make bench` run of %s, commit %s, on %s.' % (
        c['date'], c['commit'], c['machine'])
    nruns = (sum(result['pair'][m]['expected'] for m in result['pair']
                 if m != 'ratios') +
             sum(len(s[m]['runs']) for s in result['storm'].values()
                 for m in STORM_MODES if m in s) +
             sum(len(f['runs']) for f in result['flood'].values()))
    if not nruns:
        text = '%s\n\nno data: no round or storm ran (the hosts\' consoles ' \
               'are in %s)\n' % (head, bdir)
        with open(os.path.join(bdir, 'summary.md'), 'w') as f:
            f.write(text)
        print(text)
        sys.exit(1)
    md = [head, '']
    if any(result['pair'][m]['expected'] for m in ('peer', 'cs', 'wa')):
        md += pair_md(result['pair'])
    md += storm_md(result['storm'])
    md += flood_md(result['flood'])
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
    plot_storms(bdir, result['storm'])


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
    for run in ('pair-peer', 'pair-cs', 'pair-wa', 'pair-held'):
        vals = sorted(t for (r, _, _, t, _) in rows if r == run)
        if not vals:
            continue
        path = os.path.join(bdir, run + '.cdf')
        with open(path, 'w') as f:
            for i, v in enumerate(vals):
                f.write('%.3f %.4f\n' % (v, (i + 1) / len(vals)))
        series.append("'%s' using 1:2 with steps lw 2 title '%s'"
                      % (path, run))
    if not series:
        return
    script = ("set terminal png size 800,500\n"
              "set output '%s'\n"
              "set title 'Connection set-up time, single pair (CDF)'\n"
              "set xlabel 'ms from the common start to ESTABLISHED on both'\n"
              "set ylabel 'fraction of connections'\n"
              "set key bottom right\nset grid\n"
              "plot %s\n" % (os.path.join(bdir, 'latency.png'),
                             ', '.join(series)))
    subprocess.run(['gnuplot'], input=script, text=True, check=False)


STORM_MODES = ('peer', 'cs', 'wa')
MODE_LABEL = {'peer': 'peer', 'cs': 'client/server', 'wa': 'workaround'}


def slab(path):
    """before, peak, after (kB of Slab in /proc/meminfo)"""
    try:
        v = [int(x) for x in open(path).read().split()]
    except (OSError, ValueError):
        return None
    return v if len(v) == 3 else None


def counter_deltas(bdir, run):
    """per host: each CM counter's change over the run"""
    out = {}
    for h in HOSTS:
        before = counters(os.path.join(bdir, h, run + '.before'))
        after = counters(os.path.join(bdir, h, run + '.after'))
        out[h] = {k: v - before.get(k, 0) for k, v in after.items()}
    return out


def lost_mads(delta):
    """REQ/REP/RTU sent and never counted by the receiving CM: per
    direction on two hosts, summed over all hosts on more"""
    def count(hosts, k):
        return sum(delta[h].get(k, 0) for h in hosts)
    ways = ([((s,), (d,)) for s, d in (('a', 'b'), ('b', 'a'))]
            if len(delta) == 2 else [(tuple(delta), tuple(delta))])
    return {'%s>%s/%s' % (''.join(src), ''.join(dst), m): max(0,
            count(src, 'cm_tx_msgs/' + m) - count(dst, 'cm_rx_msgs/' + m) -
            count(dst, 'cm_rx_duplicates/' + m))
            for src, dst in ways for m in ('req', 'rep', 'rtu')}


def cpu_busy(path):
    """share of CPU time not idle between the first and last sample of
    /proc/stat taken during the storm (uml-bench-init.sh)"""
    try:
        rows = [[int(x) for x in l.split()[2:]] for l in open(path)]
    except (OSError, ValueError):
        return None
    if len(rows) < 2:
        return None
    d = [b - a for a, b in zip(rows[0], rows[-1])]
    total = sum(d[:8])
    return round(1 - (d[3] + d[4]) / total, 3) if total else None


def storm_one(bdir, run, expected):
    """One storm run: formed over time, failures and what it cost."""
    ends, rounds, mads = load_run(bdir, run)
    by_pair = collections.defaultdict(list)
    for e in ends:
        by_pair[e['pair']].append(e)
    formed, usable, errs = [], [], collections.Counter()
    dups = sum(e.get('dup', 0) for e in ends)
    wrong = sum(e.get('wrong', 0) for e in ends)
    wrong += sum(r.get('stray', 0) for r in rounds)
    for es in by_pair.values():
        ok = (len(es) == 2 and all(e['est_ms'] >= 0 for e in es) and
              not any(e['wrong'] or e['dup'] for e in es))
        if ok and not (es[0]['qpn'] == es[1]['peer_qpn'] and
                       es[1]['qpn'] == es[0]['peer_qpn']):
            dups += 1      # two RC connections for one pair
            ok = False
        if not ok:
            errs.update(e['err'] or 'ok' for e in es)
            continue
        formed.append(max(e['est_ms'] for e in es))
        if all(e['ok'] for e in es):
            usable.append(max(e['done_ms'] for e in es))
        else:
            errs.update(e['err'] for e in es if e['err'])
    delta = counter_deltas(bdir, run)
    retries = collections.Counter()
    for host in HOSTS:
        for k, v in delta[host].items():
            # not mra: a response sent without a cm_id (the MRA for a
            # resent held REQ) counts as a retry too
            if k.startswith('cm_tx_retries/') and not k.endswith('/mra'):
                retries[k.split('/', 1)[1]] += v
    rej = mads['rej']
    nmads = sum(mads[k] for k in CONNECT_MADS)
    return {
        'expected': expected, 'formed': len(formed),
        'failed': expected - len(formed), 'usable': len(usable),
        'duplicates': dups, 'wrong_process': wrong,
        'all_formed_ms': max(formed) if len(formed) == expected else None,
        'p50_ms': pct(formed, 50),
        'all_usable_ms': max(usable) if len(usable) == expected else None,
        'rej_received': rej, 'errors': dict(errs),
        'mads_per_conn': round(nmads / len(formed), 2) if formed else None,
        'mads': {k: mads[k] for k in CONNECT_MADS},
        'resent': dict(retries),
        'slab_kb': {h: slab(os.path.join(bdir, h, run + '.slab'))
                    for h in HOSTS},
        'late_ms': max([r.get('late_ms', 0) for r in rounds] or [0]),
        'lost': lost_mads(delta),
        'cpu_busy': {h: cpu_busy(os.path.join(bdir, h, run + '.cpu'))
                     for h in HOSTS},
        'curve': sorted(formed),
    }


def median(values):
    v = sorted(x for x in values if x is not None)
    return v[(len(v) - 1) // 2] if v else None


def cv(values):
    """coefficient of variation (population) of the runs, for steadiness"""
    v = [x for x in values if x is not None]
    if len(v) < 2:
        return None
    mean = sum(v) / len(v)
    return round((sum((x - mean) ** 2 for x in v) / len(v)) ** 0.5 / mean, 3)


def storms(bdir):
    """storm-R-MODE-REP runs -> per R and mode: runs and medians"""
    runs = collections.defaultdict(list)
    for path in glob.glob(os.path.join(bdir, 'a', 'storm-*.rc')):
        name = os.path.basename(path)[:-3]
        _, r, mode, rep = name.split('-')
        runs[(int(r), mode)].append((int(rep), name))
    out = {}
    # every rank connects to every rank of the other hosts
    npairs = len(HOSTS) * (len(HOSTS) - 1) // 2
    for (r, mode), reps in sorted(runs.items()):
        s = out.setdefault(str(r), {'ranks': r, 'hosts': len(HOSTS),
                                    'connections': npairs * r * r})
        res = [storm_one(bdir, name, s['connections'])
               for _, name in sorted(reps)]
        s[mode] = {
            'runs': res,
            'all_formed_ms': median(x['all_formed_ms'] for x in res),
            'all_usable_ms': median(x['all_usable_ms'] for x in res),
            'failed': sum(x['failed'] for x in res),
            'duplicates': sum(x['duplicates'] for x in res),
            'wrong_process': sum(x['wrong_process'] for x in res),
            'rej_received': sum(x['rej_received'] for x in res),
            'mads_per_conn': median(x['mads_per_conn'] for x in res),
            'resent': sum(sum(x['resent'].values()) for x in res),
            'cv': cv([x['all_formed_ms'] for x in res]),
        }
    for s in out.values():
        if not all(m in s for m in STORM_MODES):
            continue
        # judged on all usable (a SEND both ways): what users wait for
        p, c, w = (s[m]['all_usable_ms'] for m in STORM_MODES)
        s['peer/wa'] = ratio(p, w)
        s['peer/cs'] = ratio(p, c)
        p, c, w = (s[m]['all_formed_ms'] for m in STORM_MODES)
        s['formed peer/wa'] = ratio(p, w)
        s['formed peer/cs'] = ratio(p, c)
        s['targets'] = {
            'peer <= %g wa' % TARGET_WA: s['peer/wa'] is not None and
            s['peer/wa'] <= TARGET_WA,
            'peer <= %g cs' % TARGET_CS: s['peer/cs'] is not None and
            s['peer/cs'] <= TARGET_CS,
            'no failure or dup (peer)': s['peer']['failed'] == 0 and
            s['peer']['duplicates'] == 0,
            'all usable in every run (peer)': all(
                x['all_usable_ms'] is not None for x in s['peer']['runs']),
            'no REJ (peer)': s['peer']['rej_received'] == 0,
            'no wrong process': all(s[m]['wrong_process'] == 0
                                    for m in STORM_MODES),
        }
    return out


def floods(bdir):
    """flood-R-N-REP runs: root's R x R peer storm while nobody floods N
    ids; N = 0 is the unloaded run"""
    runs = collections.defaultdict(list)
    for path in glob.glob(os.path.join(bdir, 'a', 'flood-*.rc')):
        name = os.path.basename(path)[:-3]
        if name.endswith('.flood'):
            continue
        _, r, n, rep = name.split('-')
        runs[(int(n), int(r))].append((int(rep), name))
    out = {}
    for (n, r), reps in sorted(runs.items()):
        names = [name for _, name in sorted(reps)]
        res = [storm_one(bdir, name, r * r) for name in names]
        whole = [counter_deltas(bdir, name + '.flood') for name in names]
        out[str(n)] = {
            'ids': n, 'ranks': r, 'runs': res,
            'all_usable_ms': median(x['all_usable_ms'] for x in res),
            'all_formed_ms': median(x['all_formed_ms'] for x in res),
            'all_usable_every_run': all(x['all_usable_ms'] is not None
                                        for x in res),
            'wrong_process': sum(x['wrong_process'] for x in res),
            # nobody's flooders, both hosts, every run: exit 0
            'flooders_ok': n == 0 or all(
                read_first(os.path.join(bdir, h, name + '.flood.rc')) == '0'
                for h in ('a', 'b') for name in names),
            'flooder': {h: read_first(os.path.join(bdir, h, names[-1] +
                                                   '.flood.log'))
                        for h in ('a', 'b')},
            'req_sent_a': [d['a'].get('cm_tx_msgs/req') for d in whole],
            'held_b': [d['b'].get('held') for d in whole],
        }
    base = out.get('0', {})
    for f in out.values():
        f['ratio'] = ratio(f['all_usable_ms'], base.get('all_usable_ms'))
        f['formed ratio'] = ratio(f['all_formed_ms'],
                                  base.get('all_formed_ms'))
        f['target met'] = (f['all_usable_every_run'] and
                           f['wrong_process'] == 0 and f['flooders_ok'] and
                           (f['ids'] == 0 or f['ratio'] is not None and
                            f['ratio'] <= TARGET_FLOOD))
    return out


def read_first(path):
    try:
        with open(path) as f:
            return f.readline().strip()
    except OSError:
        return None


def flood_md(flood):
    if not flood:
        return []
    md = ['Floods (root\'s R x R peer storm, R ranks per host, while user '
          'nobody on host a peer-connects N ids, with no QP, to N ports '
          'that nobody bound as peer on host b and never connects: b holds '
          'their REQs unanswered; medians of %d runs; time = all usable, '
          'from the common start; N = 0 unloaded, interleaved in the same '
          'run; REQs and held counted over the whole flood):'
          % max(len(f['runs']) for f in flood.values()), '',
          '| N ids | R x R | root all usable ms | ratio to unloaded (target '
          '<= %g) | root all formed ms (ratio) | root all usable in every '
          'run | wrong process | REQs sent by a | REQs held at b | flooders '
          'ok | target met |' % TARGET_FLOOD,
          '|---|---|---|---|---|---|---|---|---|---|---|']
    for f in flood.values():
        md.append('| %d | %dx%d | %s | %s | %s (%s) | %s | %d | %s | %s | %s '
                  '| %s |' % (
            f['ids'], f['ranks'], f['ranks'], fmt(f['all_usable_ms']),
            fmt(f['ratio']), fmt(f['all_formed_ms']), fmt(f['formed ratio']),
            'yes' if f['all_usable_every_run'] else 'NO',
            f['wrong_process'],
            ', '.join(str(d) for d in f['req_sent_a']) if f['ids'] else '-',
            ', '.join(str(d) for d in f['held_b']) if f['ids'] else '-',
            'yes' if f['flooders_ok'] else 'NO',
            'yes' if f['target met'] else 'NO'))
    md += ['', 'Each run, root all usable ms: ' + '; '.join(
        '%d ids: %s' % (f['ids'], ', '.join(fmt(x['all_usable_ms'])
                                             for x in f['runs']))
        for f in flood.values()), '']
    md += ['Last flood, host %s: %s' % (h, f['flooder'][h] or '-')
           for f in list(flood.values())[-1:] if f['ids'] for h in 'ab']
    return md + ['']


def slab_txt(runs):
    """median over runs, both hosts: peak - before and after - before"""
    peak, left = [], []
    for x in runs:
        for v in x['slab_kb'].values():
            if v:
                peak.append(v[1] - v[0])
                left.append(v[2] - v[0])
    return '%s / %s' % (fmt(median(peak)), fmt(median(left)))


def storm_md(storm):
    if not storm:
        return []
    md = ['Storms on %d hosts (R ranks per host, one port each; every rank '
          'connects to every rank of the other hosts at once: R x R '
          'connections per pair of hosts (in all: %s); medians of %d runs per '
          'size and mode; time = all connections ESTABLISHED at both ends, '
          'from the common start):' % (
              len(HOSTS), ', '.join('%s at R = %d' % (s['connections'],
                                                       s['ranks'])
                                    for s in storm.values()),
              max(len(s[m]['runs']) for s in storm.values()
                  for m in STORM_MODES if m in s)), '',
          '| R x R | mode | all formed ms | all usable ms (SEND both ways) |'
          ' failed | dup | wrong process | REJ | MADs/conn | resent MADs |'
          ' slab kB peak / left |',
          '|---|---|---|---|---|---|---|---|---|---|---|']
    for s in storm.values():
        for m in STORM_MODES:
            if m not in s:
                continue
            x = s[m]
            md.append('| %dx%d | %s | %s | %s | %d | %d | %d | %d | %s | %d | %s |'
                      % (s['ranks'], s['ranks'], MODE_LABEL[m],
                         fmt(x['all_formed_ms']), fmt(x['all_usable_ms']),
                         x['failed'], x['duplicates'], x['wrong_process'],
                         x['rej_received'], fmt(x['mads_per_conn']),
                         x['resent'], slab_txt(x['runs'])))
    md += ['', 'Ratios of all usable (all formed in brackets):', '',
           '| R x R | peer/workaround (target <= %g) | '
           'peer/client-server (target <= %g) | targets met |'
           % (TARGET_WA, TARGET_CS),
           '|---|---|---|---|']
    for s in storm.values():
        if 'targets' in s:
            t = s['targets']
            md.append('| %dx%d | %s (%s) | %s (%s) | %s |' % (
                s['ranks'], s['ranks'], fmt(s['peer/wa']),
                fmt(s['formed peer/wa']), fmt(s['peer/cs']),
                fmt(s['formed peer/cs']),
                ', '.join(k + (': yes' if v else ': NO')
                          for k, v in t.items())))
    md += ['', 'Each run, all formed ms (peer; client/server; workaround):', '']
    for s in storm.values():
        md.append('- %dx%d: %s' % (s['ranks'], s['ranks'], '; '.join(
            ', '.join(fmt(x['all_formed_ms']) for x in s[m]['runs'])
            for m in STORM_MODES if m in s)))
    md += ['', 'Spread of all formed over the runs (min-max ms), runs that '
           'lost connection MADs (a REQ, REP or RTU never counted by the '
           'receiving CM), CPU busy during the storms (median over runs '
           'and hosts):', '',
           '| R x R | mode | min-max ms | runs with lost MADs | '
           'lost MADs per run | CPU busy |', '|---|---|---|---|---|---|']
    for s in storm.values():
        for m in STORM_MODES:
            if m not in s:
                continue
            runs = s[m]['runs']
            t = [x['all_formed_ms'] for x in runs if x['all_formed_ms']]
            lost = [sum(x['lost'].values()) for x in runs]
            busy = median(v for x in runs for v in x['cpu_busy'].values())
            md.append('| %dx%d | %s | %s | %d of %d | %s | %s |' % (
                s['ranks'], s['ranks'], MODE_LABEL[m],
                '%s-%s' % (fmt(min(t)), fmt(max(t))) if t else '-',
                sum(1 for v in lost if v), len(runs),
                ', '.join(str(v) for v in lost),
                '%d%%' % round(100 * busy) if busy is not None else '-'))
    steady = median(s[m]['cv'] for s in storm.values() for m in STORM_MODES
                    if m in s)
    if steady is not None:
        md += ['', 'Steadiness: coefficient of variation of all formed over '
               'the runs, median over sizes and modes: %.2f.' % steady]
    md.append('')
    return md


def plot_storms(bdir, storm):
    """formed connections over time, per size, the median run of each mode"""
    if not storm or not shutil.which('gnuplot'):
        return
    panels = []
    for s in storm.values():
        series = []
        for m in STORM_MODES:
            if m not in s:
                continue
            runs = s[m]['runs']
            pick = sorted(runs, key=lambda x: x['curve'][-1] if x['curve']
                          else 1e9)[(len(runs) - 1) // 2]
            path = os.path.join(bdir, 'storm-%d-%s.dat' % (s['ranks'], m))
            with open(path, 'w') as f:
                for i, t in enumerate(pick['curve']):
                    f.write('%.3f %d\n' % (t, i + 1))
            series.append("'%s' using 1:2 with steps lw 2 title '%s'"
                          % (path, MODE_LABEL[m]))
        panels.append("set title '%dx%d ranks: %d connections'\nplot %s\n"
                      % (s['ranks'], s['ranks'], s['connections'],
                         ', '.join(series)))
    rows = (len(panels) + 1) // 2
    script = ("set terminal png size 1100,%d\nset output '%s'\n"
              "set multiplot layout %d,2\nset xlabel 'ms from the start'\n"
              "set ylabel 'connections formed'\nset key bottom right\n"
              "set grid\n%sunset multiplot\n"
              % (400 * rows, os.path.join(bdir, 'storms.png'), rows,
                 ''.join(panels)))
    subprocess.run(['gnuplot'], input=script, text=True, check=False)


if __name__ == '__main__':
    main()
