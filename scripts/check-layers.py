#!/usr/bin/env python3
"""The shape of the code (issue 9): no two files of app/src import each other, and the kernel
(errors, state, request helpers, jobs, alerts, storage, rate limits) imports no domain.
Exits non-zero, naming the files, when either rule is broken. Run by `make test`."""
import itertools, os, re, sys

ROOT = 'app/src'
KERNEL = ['error.rs', 'state.rs', 'server.rs', 'jobs/mod.rs', 'jobs/engine.rs', 'jobs/claim.rs',
          'alerts.rs', 'storage/mod.rs', 'storage/local.rs', 'storage/marked.rs', 'storage/signed.rs',
          'storage/faults.rs', 'ratelimit.rs', 'live.rs', 'i18n.rs', 'prefs.rs', 'ui.rs', 'time.rs', 'token.rs', 'csv_export.rs', 'settings.rs',
          # The audit log is written by every part (jobs and alerts too): its writer is kernel.
          'audit/mod.rs', 'audit/db.rs', 'audit/upkeep.rs', 'audit/export.rs']
DOMAINS = ('auth', 'contact', 'inbox', 'shares', 'maintenance', 'pages', 'audit/api', 'audit/ui')

files = {}
for root, _, names in os.walk(ROOT):
    for n in names:
        if n.endswith('.rs'):
            p = os.path.relpath(os.path.join(root, n), ROOT)
            files[p] = open(os.path.join(root, n), encoding='utf-8').read()

def module(p):
    m = p[:-3]
    if m.endswith('/mod'):
        m = m[:-4]
    return '' if m == 'lib' else m.replace('/', '::')

mods = {module(p): p for p in files}
edges = {p: set() for p in files}
for p, src in files.items():
    me = module(p)
    # `super` of a file `a/b.rs` is `a`; of `a/mod.rs` (module `a`) it is a's parent.
    parent = me.rsplit('::', 1)[0] if '::' in me else ''
    refs = set(re.findall(r'crate::([a-z_]+(?:::[a-z_]+)*)', src))
    refs |= {(parent + '::' if parent else '') + r for r in re.findall(r'(?<![a-z_:])super::([a-z_]+(?:::[a-z_]+)*)', src)}
    for r in refs:
        parts = r.split('::')
        for i in range(len(parts), 0, -1):
            target = mods.get('::'.join(parts[:i]))
            if target and target != p:
                edges[p].add(target)
                break

problems = [f'{a} and {b} import each other' for a, b in itertools.combinations(sorted(files), 2)
            if b in edges[a] and a in edges[b]]
for k in KERNEL:
    if k in edges:
        problems += [f'kernel {k} imports domain {d}' for d in sorted(edges[k]) if d.startswith(DOMAINS)]
if problems:
    print('layers: ' + '\n        '.join(problems))
    sys.exit(1)
print(f'layers: ok ({len(files)} files, no import cycles, the kernel imports no domain)')
