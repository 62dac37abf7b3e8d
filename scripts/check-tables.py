#!/usr/bin/env python3
"""Every table has one owning domain, and only its owner's SQL names it.

The owners are the table in docs/developer.md under "## Table owners" (`table` | owner | …): the
one list a newcomer reads is the one this script enforces. Each crate's SQL (string literals that
read as SQL, outside `#[cfg(test)]` modules) may name its own tables and the kernel's; a domain
reaches another domain's rows only through a kernel trait the owner implements (the composition
root wires them), never by naming the table. The composition root (`app/src`) and the server
(`server/src`: migrations, doctor, restore) are not domains and are not checked; tests are not
either (they set the scene across domains).

    python3 scripts/check-tables.py          # exit 1 on a domain naming another's table that
                                             # scripts/foreign-tables.allow does not list
    python3 scripts/check-tables.py --list   # each crate's tables, as found
    python3 scripts/check-tables.py --self-test

scripts/foreign-tables.allow lists the `domain table` pairs that remain from before the rule (a
ratchet: a pair may be removed, never added; the check fails on a listed pair that no longer
occurs, so the list only shrinks). Standard library only: it runs before cargo has built anything.

It also checks the state's parts (docs/developer.md, "State"): each field of
`kernel::state::Parts` (the `parts!` list in app/kernel/src/state.rs) is named as its slot by
exactly one type (`type Slot = …slot::NAME;` in an `impl Part`): the compiler checks that every
field is filled with a type that names it; two types naming one field would make them swappable.
"""
import argparse
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join('docs', 'developer.md')
ALLOW = os.path.join('scripts', 'foreign-tables.allow')
SQL_WORDS = re.compile(r'\b(select|insert\s+into|update|delete\s+from|with)\b', re.I)
TABLE_AFTER = re.compile(r'\b(from|join|into|update|using|exists\s*\(\s*select\s+1\s+from|references)\s+((?:[a-z_][a-z0-9_]*\.)?[a-z_][a-z0-9_]*)', re.I)
WRITES = ('into', 'update')
STRING = re.compile(r'r(#*)"(.*?)"\1|"((?:[^"\\]|\\.)*)"', re.S)


def owners(root):
    """{table or prefix*: owner} from the docs' table."""
    text = open(os.path.join(root, DOC), encoding='utf-8').read()
    part = text.split('## Table owners', 1)
    if len(part) < 2:
        sys.exit(f'{DOC}: no "## Table owners" section')
    table = {}
    for line in part[1].splitlines():
        if line.startswith('## '):
            break
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) < 2 or not cells[0].startswith('`'):
            continue
        published = 'published' in cells[1]
        for name in re.findall(r'`([a-z_.*]+)`', cells[0]):
            table[name] = cells[1].split()[0].strip('`') + (' published' if published else '')
    if not table:
        sys.exit(f'{DOC}: the table owners list is empty')
    return table


def owner_of(name, table):
    return owner_entry(name, table).split()[0] if owner_entry(name, table) else None


def is_published(name, table):
    return (owner_entry(name, table) or '').endswith(' published')


def owner_entry(name, table):
    if name in table:
        return table[name]
    for key, owner in table.items():
        if key.endswith('*') and name.startswith(key[:-1]):
            return owner
    # Partitions and their like (`audit_events_2026_12`) belong to their parent.
    for key, owner in table.items():
        if not key.endswith('*') and name.startswith(key + '_') and re.fullmatch(r'[0-9_]+|default', name[len(key) + 1:]):
            return owner
    return None


def without_tests(src):
    """The source without `#[cfg(test)]` items (a module or a function, by brace matching)."""
    out = []
    i = 0
    for m in re.finditer(r'#\[cfg\(test\)\]', src):
        if m.start() < i:
            continue
        out.append(src[i:m.start()])
        j = src.find('{', m.end())
        semi = src.find(';', m.end())
        if j < 0 or (0 <= semi < j):
            i = semi + 1 if semi >= 0 else len(src)
            continue
        depth = 0
        k = j
        while k < len(src):
            if src[k] == '{':
                depth += 1
            elif src[k] == '}':
                depth -= 1
                if depth == 0:
                    break
            k += 1
        i = k + 1
    out.append(src[i:])
    return ''.join(out)


def tables_named(src, table):
    """(table, line, written) for every known table an SQL string literal of `src` names."""
    src = without_tests(src)
    found = []
    for m in STRING.finditer(src):
        body = m.group(2) if m.group(2) is not None else m.group(3)
        if not body or not SQL_WORDS.search(body):
            continue
        line = src.count('\n', 0, m.start()) + 1
        for t in TABLE_AFTER.finditer(body):
            name = t.group(2).lower()
            if owner_entry(name, table):
                written = t.group(1).lower() in WRITES or re.search(r'delete\s+from\s*$', body[:t.start(2)], re.I) is not None
                found.append((name, line, written))
    return found


def crates(root):
    """(domain, folder) for every crate whose SQL is checked."""
    base = os.path.join(root, 'app', 'domains')
    for name in sorted(os.listdir(base)):
        src = os.path.join(base, name, 'src')
        if os.path.isdir(src):
            yield name, src
    yield 'kernel', os.path.join(root, 'app', 'kernel', 'src')
    yield 'common', os.path.join(root, 'app', 'common', 'src')


def allowed(root):
    path = os.path.join(root, ALLOW)
    if not os.path.exists(path):
        return set()
    pairs = set()
    for line in open(path, encoding='utf-8'):
        line = line.split('#', 1)[0].split()
        if len(line) == 2:
            pairs.add((line[0], line[1]))
    return pairs


def check(root, listing=False):
    table = owners(root)
    allow = allowed(root)
    used = set()
    bad = []
    for domain, folder in crates(root):
        seen = set()
        for dirpath, _, files in os.walk(folder):
            for f in sorted(files):
                if not f.endswith('.rs'):
                    continue
                path = os.path.join(dirpath, f)
                for name, line, written in tables_named(open(path, encoding='utf-8').read(), table):
                    owner = owner_of(name, table)
                    seen.add(name)
                    if is_published(name, table) and owner != domain:
                        if written:
                            bad.append(f'{os.path.relpath(path, root)}:{line}: {domain} writes `{name}`, a view {owner} publishes for reading')
                        continue
                    if owner != domain and owner != 'kernel':
                        if (domain, name) in allow:
                            used.add((domain, name))
                            continue
                        bad.append(f'{os.path.relpath(path, root)}:{line}: {domain} names `{name}`, a table of {owner}')
        if listing:
            print(f'{domain}: {", ".join(sorted(seen)) or "-"}')
    for domain, name in sorted(allow - used):
        bad.append(f'{ALLOW}: `{domain} {name}` no longer occurs: remove the line (the list only shrinks)')
    return bad


STATE = os.path.join('app', 'kernel', 'src', 'state.rs')
SLOT_DECL = re.compile(r'type\s+Slot\s*=\s*[A-Za-z_:]*slot::([A-Za-z_][A-Za-z0-9_]*)\s*;')


def check_slots(root):
    """Each slot of `parts!` named by exactly one type."""
    state = os.path.join(root, STATE)
    if not os.path.exists(state):
        return []
    m = re.search(r'parts!\s*\{(.*?)\n\}', open(state, encoding='utf-8').read(), re.S)
    if not m:
        return [f'{STATE}: no `parts!` list found']
    slots = re.findall(r'^\s*[a-z_][a-z0-9_]*\s*:\s*([A-Za-z_][A-Za-z0-9_]*)\s*,', m.group(1), re.M)
    named = {}
    for top in ('app', 'server'):
        for dirpath, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [d for d in dirs if d not in ('target', 'node_modules')]
            for f in files:
                if f.endswith('.rs'):
                    path = os.path.join(dirpath, f)
                    for n, line in enumerate(open(path, encoding='utf-8'), 1):
                        for slot in SLOT_DECL.findall(line):
                            named.setdefault(slot, []).append(f'{os.path.relpath(path, root)}:{n}')
    bad = []
    for slot in slots:
        places = named.get(slot, [])
        if len(places) != 1:
            bad.append(f'{STATE}: the slot `{slot}` is named by {len(places)} types ({", ".join(places) or "none"}); one type per slot')
    for slot in sorted(set(named) - set(slots)):
        bad.append(f'{named[slot][0]}: `slot::{slot}` is not a field of `parts!` in {STATE}')
    return bad


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, 'docs'))
        with open(os.path.join(root, DOC), 'w') as f:
            f.write('# x\n## Table owners\n\n| table | owner |\n|---|---|\n| `apples`, `pears_*` | fruit |\n| `settings` | kernel |\n| `carts` | shop |\n| `apple_names` (view) | fruit (published) |\n')
        for d in ('fruit', 'shop'):
            os.makedirs(os.path.join(root, 'app', 'domains', d, 'src'))
        os.makedirs(os.path.join(root, 'app', 'kernel', 'src'))
        os.makedirs(os.path.join(root, 'app', 'common', 'src'))

        def write(d, text):
            with open(os.path.join(root, 'app', 'domains', d, 'src', 'lib.rs'), 'w') as f:
                f.write(text)

        write('fruit', 'fn a() { q!("select * from apples join pears_green p on true"); q!(r#"update settings set x = 1"#); }')
        write('shop', 'fn b() { q!("insert into carts values (1)"); }\n#[cfg(test)]\nmod tests { fn t() { q!("delete from apples"); } }\n')
        assert check(root) == [], check(root)
        write('shop', 'fn b() { q!(r#"with x as (select 1) delete from carts c using apples a where true"#); }')
        bad = check(root)
        assert len(bad) == 1 and '`apples`, a table of fruit' in bad[0], bad
        write('shop', 'fn b() { t!("Deleted from apples"); q!("select 1 from carts where not exists (select 1 from pears_x)"); }')
        bad = check(root)
        assert len(bad) == 1 and 'pears_x' in bad[0], bad
        write('shop', 'fn b() { q!("select c.id, a.name from carts c join apple_names a on true"); }')
        assert check(root) == [], check(root)
        write('shop', 'fn b() { q!("delete from apple_names where true"); }')
        bad = check(root)
        assert len(bad) == 1 and 'writes `apple_names`' in bad[0], bad
        with open(os.path.join(root, STATE), 'w') as f:
            f.write('parts! {\n    fruit: Fruit,\n    shop: Shop,\n}\n')
        write('fruit', 'impl Part for Apples { type Slot = kernel::state::slot::Fruit; }')
        write('shop', 'impl Part for Carts { type Slot = slot::Shop; }')
        assert check_slots(root) == [], check_slots(root)
        write('shop', 'impl Part for Carts { type Slot = slot::Fruit; }')
        bad = check_slots(root)
        assert len(bad) == 2 and 'slot `Fruit` is named by 2 types' in bad[0] and 'slot `Shop` is named by 0 types' in bad[1], bad
    print('check-tables self-test: ok')


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--list', action='store_true')
    p.add_argument('--self-test', action='store_true')
    p.add_argument('root', nargs='?', default=ROOT)
    a = p.parse_args()
    if a.self_test:
        self_test()
        return
    bad = check(a.root, a.list) + check_slots(a.root)
    for b in bad:
        print(b)
    if bad:
        print(f'{len(bad)} problem(s): a domain names another domain\'s table (reach it through a kernel trait its owner implements: docs/developer.md, "Table owners"), or a slot of the state\'s parts is not named by exactly one type (docs/developer.md, "State")', file=sys.stderr)
        sys.exit(1)
    print('check-tables: every domain names only its own tables and the kernel\'s')


if __name__ == '__main__':
    main()
