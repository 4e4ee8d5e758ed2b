#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Report of tests/rds/run-rds.sh: <dir>/summary.md from the runs' logs.

Each run <tag> = <mode>-<conns>-<k> left, on each host (<dir>/a, <dir>/b),
rds-<tag>.log (tests/rds/rds_storm), .rc and .events
(tests/rds/rds-scenario.sh).  Per mode and size, medians over the runs of:
the time to first delivery over all connection ends of both hosts (p50,
p99), at the first connect and at the reconnects; and per run, summed over
both hosts: RDS's ib_connect_raced, the REJs the CMs sent, RDS's
"rejected, dropping connection" lines, the QPs rdma_cm created per
connection and (re)connect (2 at least: one per end), messages lost,
duplicated or misdelivered; a peer run has under a tenth of the REJs
and drops of the stock run of the same size and number.  Also checks.tsv:
"rds/<tag>/<check>\tPASS|FAIL".
"""
import os
import re
import statistics
import sys

HOSTS = ('a', 'b')


def pct(vals, p):
    vals = sorted(vals)
    if not vals:
        return None
    return vals[max(0, -(-len(vals) * p // 100) - 1)]


def parse_log(path):
    res = {'first': {}, 'rounds': {}, 'counters': {}, 'dup': 0, 'mis': 0,
           'send_errors': 0}
    if not os.path.exists(path):
        return None
    for line in open(path, errors='replace'):
        f = line.split()
        if not f:
            continue
        if f[0] == 'first' and len(f) == 4:
            res['first'].setdefault(int(f[1]), []).append(float(f[3]))
        elif f[0] == 'round' and 'lost' in f:
            res['rounds'][int(f[1])] = int(f[f.index('lost') + 1])
        elif f[0] == 'counter' and len(f) == 4:
            res['counters'][f[1]] = int(f[3]) - int(f[2])
        elif f[0] == 'dup_or_reordered':
            res['dup'], res['mis'], res['send_errors'] = (
                int(f[1]), int(f[3]), int(f[5]))
        elif f[0] == 'conns':
            res['conns'], res['rounds_n'] = int(f[1]), int(f[5])
    return res


def parse_events(path):
    ev = {}
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) == 2:
                ev[f[0]] = int(f[1])
    return ev


def analyse_run(d, tag):
    logs = {h: parse_log(os.path.join(d, h, 'rds-%s.log' % tag))
            for h in HOSTS}
    if any(v is None or 'conns' not in v for v in logs.values()):
        return None
    rcs = []
    for h in HOSTS:
        p = os.path.join(d, h, 'rds-%s.rc' % tag)
        rcs.append(open(p).read().strip() if os.path.exists(p) else '?')
    ev = {h: parse_events(os.path.join(d, h, 'rds-%s.events' % tag))
          for h in HOSTS}
    conns, rounds = logs['a']['conns'], logs['a']['rounds_n']
    first0 = sum((logs[h]['first'].get(0, []) for h in HOSTS), [])
    firstr = sum((logs[h]['first'].get(r, []) for h in HOSTS
                  for r in range(1, rounds)), [])
    lost = sum(sum(logs[h]['rounds'].get(r, 0) for r in
                   range(rounds)) for h in HOSTS)
    missing = sum(rounds - len(logs[h]['rounds']) for h in HOSTS)
    return {
        'conns': conns, 'rounds': rounds, 'rc': rcs,
        'c50': pct(first0, 50), 'c99': pct(first0, 99),
        'r50': pct(firstr, 50), 'r99': pct(firstr, 99),
        'complete': len(first0) == 2 * conns and
        len(firstr) == 2 * conns * (rounds - 1),
        'raced': sum(logs[h]['counters'].get('ib_connect_raced', 0)
                     for h in HOSTS),
        'rej': sum(ev[h].get('rej', 0) for h in HOSTS),
        'dropping': sum(ev[h].get('dropping', 0) for h in HOSTS),
        'qps': sum(ev[h].get('qp_create', 0) for h in HOSTS) /
        (conns * rounds),
        'retries': sum(ev[h].get('req_retries', 0) for h in HOSTS),
        'mem': sum(ev[h].get('mem_before', 0) - ev[h].get('mem_after', 0)
                   for h in HOSTS) // 1024,
        'lost': lost, 'missing_rounds': missing,
        'dup': sum(logs[h]['dup'] for h in HOSTS),
        'mis': sum(logs[h]['mis'] for h in HOSTS),
    }


def med(runs, key):
    vals = [r[key] for r in runs if r[key] is not None]
    return statistics.median(vals) if vals else None


def fmt(v, digits=0):
    if v is None:
        return '-'
    return ('%%.%df' % digits) % v


def main():
    d = sys.argv[1]
    tags = set()
    for h in HOSTS:
        hd = os.path.join(d, h)
        for f in os.listdir(hd) if os.path.isdir(hd) else []:
            m = re.match(r'rds-(.+)\.log$', f)
            if m:
                tags.add(m.group(1))
    runs = {}
    by_tag = {}
    checks = []
    for tag in sorted(tags):
        r = analyse_run(d, tag)
        m = re.match(r'(?:(\w+)-)?(\d+)-(\d+)$', tag)
        mode = (m.group(1) if m else None) or 'stock'
        ok = (r is not None and r['rc'] == ['0', '0'] and r['complete']
              and not r['lost'] and not r['missing_rounds']
              and not r['dup'] and not r['mis'])
        checks.append('rds/%s/all_delivered\t%s' % (tag,
                                                    'PASS' if ok else 'FAIL'))
        # each end made a QP for each (re)connect: nothing was left up
        ok = r is not None and r['qps'] >= 2
        checks.append('rds/%s/all_reconnected\t%s' % (
            tag, 'PASS' if ok else 'FAIL'))
        if r:
            runs.setdefault((mode, r['conns']), []).append(r)
            by_tag[tag] = r
    # the peer model against the stock run of the same size and number:
    # crossing connects no longer end in REJs and drops (a REQ that comes
    # before our connect's address is resolved still may)
    for tag, r in sorted(by_tag.items()):
        base = by_tag.get(re.sub(r'^peer-', 'stock-', tag))
        if not tag.startswith('peer-') or not base:
            continue
        ok = (10 * (r['rej'] + r['dropping']) <=
              base['rej'] + base['dropping'] and base['rej'] > 0)
        checks.append('rds/%s/rejects_under_tenth_of_stock\t%s' % (
            tag, 'PASS' if ok else 'FAIL'))
    out = []
    cond = os.environ.get('RDS_CONDITIONS')
    if cond:
        out += [cond, '']
    out += ['RDS/IB over soft-RoCE between two VMs: one AF_RDS socket per TOS '
            '(one RDS connection each), both hosts sending first at the '
            'same start (connect), then reconnects of all connections at '
            'once (rxe0 deleted and added again on both hosts with messages '
            'queued; time from the re-add). Medians over the runs; raced, '
            'REJs, drops and QPs are per run, both hosts summed.', '',
            '| mode | conns | runs | connect p50 ms | connect p99 ms | '
            'reconnect p50 ms | reconnect p99 ms | ib_connect_raced | '
            'REJs sent | "dropping connection" | QPs per conn and connect '
            '(>= 2) | lost | dup or misdelivered |',
            '|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for (mode, conns), rs in sorted(runs.items()):
        out.append('| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s '
                   '| %d | %d |' % (
                       mode, conns, len(rs), fmt(med(rs, 'c50')),
                       fmt(med(rs, 'c99')), fmt(med(rs, 'r50')),
                       fmt(med(rs, 'r99')), fmt(med(rs, 'raced')),
                       fmt(med(rs, 'rej')), fmt(med(rs, 'dropping')),
                       fmt(med(rs, 'qps'), 2),
                       sum(r['lost'] for r in rs),
                       sum(r['dup'] + r['mis'] for r in rs)))
    ratios = []
    for (mode, conns), rs in sorted(runs.items()):
        base = runs.get(('stock', conns))
        if mode == 'stock' or not base:
            continue
        q = []
        for key, name in (('c99', 'connect p99'), ('r99', 'reconnect p99')):
            a, b = med(rs, key), med(base, key)
            q.append('%s %s' % (name, fmt(a / b, 2) if a and b else '-'))
        ratios.append('- %s / stock, %d connections: %s' % (
            mode, conns, ', '.join(q)))
    if ratios:
        out += ['', 'Ratios of the medians, measured in this run:', '']
        out += ratios
    out += ['', 'Each run (raced, REJs, drops; connect p99, reconnect p99 '
            'ms; REQ retries on timeout in the last round; MemAvailable '
            'lost over the run, MiB, both hosts):', '']
    for (mode, conns), rs in sorted(runs.items()):
        out.append('- %s %d: %s' % (mode, conns, ' | '.join(
            '%s, %s, %s; %s, %s; %s; %s' % (
                r['raced'], r['rej'], r['dropping'], fmt(r['c99']),
                fmt(r['r99']), r['retries'], r['mem'])
            for r in rs)))
    failed = [c.split('\t')[0] for c in checks if not c.endswith('PASS')]
    if failed:
        out += ['', 'Failed checks (their runs are left out above): ' +
                ', '.join(failed) + '.']
    for h in HOSTS:
        con = os.path.join(d, h + '.console')
        if not os.path.exists(con):
            continue
        bad = [ln.split('] ', 1)[-1].strip() for ln in open(con, errors='replace')
               if re.search(r'Kernel panic|Out of memory|BUG:|WARNING:', ln)]
        if bad:
            out.append('- host %s console: %s' % (h, '; '.join(bad[:3])))
    open(os.path.join(d, 'summary.md'), 'w').write('\n'.join(out) + '\n')
    open(os.path.join(d, 'checks.tsv'), 'w').write(
        ''.join(c + '\n' for c in checks))
    print('\n'.join(out))
    print('\n'.join(checks))
    return 0 if all(c.endswith('PASS') for c in checks) and checks else 1


if __name__ == '__main__':
    sys.exit(main())
