#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
"""Build the upstream patch series described by patches/series.txt.

usage: series.py SERIES_TXT SRC OUTDIR

SRC is the prepared tree (a git repository whose HEAD is the overlay
commit on top of the tag "base").  One commit per block is made on "base"
(in a private index, SRC's checkout is not touched), then written with
git format-patch to OUTDIR, with a cover letter.  Prints the name of the
last commit (the series head).  A file listed with "@N" instead of a sed
script is stage N of it (cm_split.py: cm.c in steps).  Fails when a patch
lists a file the tree does not change, when a file's last listing has a
sed script, or when the series does not end at exactly HEAD's tree.
"""
import os
import subprocess
import sys
import tempfile

import cm_split

AUTHOR = {
    'GIT_AUTHOR_NAME': 'CM Peer Developers',
    'GIT_AUTHOR_EMAIL': 'cm-peer@example.org',
    'GIT_AUTHOR_DATE': '2026-12-02T12:00:00Z',
}
AUTHOR.update({k.replace('AUTHOR', 'COMMITTER'): v
               for k, v in list(AUTHOR.items())})


def parse(path):
    blocks = []
    cur = None
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('=== '):
                cur = {'subject': line[4:], 'body': [], 'files': [],
                       'in_files': False}
                blocks.append(cur)
            elif cur is None:
                continue
            elif line == '--- files':
                cur['in_files'] = True
            elif cur['in_files']:
                if line.strip():
                    path_, _, script = line.partition('\t')
                    cur['files'].append((path_, script))
            else:
                cur['body'].append(line)
    for b in blocks:
        while b['body'] and not b['body'][-1].strip():
            b['body'].pop()
    return blocks


_stages = {}


def stage(path, data, n):
    """Stage @n of a file the series builds in steps (cm_split.py)"""
    if path != 'drivers/infiniband/core/cm.c':
        sys.exit('series: no stages of %s' % path)
    if path not in _stages:
        _stages[path] = [s.encode() for s in cm_split.stages(data.decode())]
    return _stages[path][n - 1]


def main():
    series_txt, src, outdir = sys.argv[1:4]
    blocks = parse(series_txt)
    cover = [b for b in blocks if b['subject'] == 'cover']
    patches = [b for b in blocks if b['subject'] != 'cover']

    def git(*args, stdin=None, env=None, text=True):
        e = dict(os.environ, **AUTHOR)
        if env:
            e.update(env)
        return subprocess.run(('git', '-C', src) + args, input=stdin,
                              check=True, capture_output=True, env=e,
                              text=text).stdout

    changed = set(git('diff', '--name-only', 'base', 'HEAD').split())
    last = {}
    for i, b in enumerate(patches):
        for path, script in b['files']:
            if path not in changed:
                sys.exit('series: %s does not change %s' % (b['subject'], path))
            last[path] = (i, script)
    for path, (i, script) in sorted(last.items()):
        if script:
            sys.exit('series: last listing of %s has a sed script' % path)
    missing = changed - set(last)
    if missing:
        sys.exit('series: no patch lists %s' % ', '.join(sorted(missing)))

    fd, index = tempfile.mkstemp(prefix='series-index.')
    os.close(fd)
    ienv = {'GIT_INDEX_FILE': index}
    try:
        git('read-tree', 'base', env=ienv)
        parent = git('rev-parse', 'base').strip()
        for b in patches:
            for path, script in b['files']:
                data = git('show', 'HEAD:' + path, text=False)
                if script.startswith('@'):
                    data = stage(path, data, int(script[1:]))
                elif script:
                    data = subprocess.run(['sed', script], input=data,
                                          check=True,
                                          capture_output=True).stdout
                    data = data.rstrip(b'\n') + b'\n'
                blob = git('hash-object', '-w', '--stdin', stdin=data,
                           text=False).decode().strip()
                git('update-index', '--add', '--cacheinfo',
                    '100644,%s,%s' % (blob, path), env=ienv)
            tree = git('write-tree', env=ienv).strip()
            msg = b['subject'] + '\n\n' + '\n'.join(b['body']) + '\n'
            parent = git('commit-tree', tree, '-p', parent, '-F', '-',
                         stdin=msg).strip()
    finally:
        os.unlink(index)

    if git('rev-parse', parent + '^{tree}') != git('rev-parse', 'HEAD^{tree}'):
        sys.exit('series: the series does not end at the prepared tree')

    git('format-patch', '-q', '--diff-algorithm=histogram', '--no-signature',
        '--zero-commit',
        '--cover-letter', '-o', outdir, 'base..' + parent)
    if cover:
        c = cover[0]
        path = os.path.join(outdir, '0000-cover-letter.patch')
        with open(path) as f:
            text = f.read()
        text = text.replace('*** SUBJECT HERE ***', c['body'][0])
        text = text.replace('*** BLURB HERE ***',
                            '\n'.join(c['body'][1:]).strip('\n'))
        with open(path, 'w') as f:
            f.write(text)
    print(parent)


if __name__ == '__main__':
    main()
