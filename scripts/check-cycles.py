#!/usr/bin/env python3
"""The shape of the code: no import cycle between the files of a crate, at any length.

The workspace is split into crates (app, app/*, app/domains/*, server) and cargo refuses a cycle
between crates; it does not see one between the files *inside* a crate. This script does: it builds
each crate's module graph from its `crate::`, `super::` and `self::` paths and reports every
strongly connected component of more than one file, with one concrete cycle through it.

    python3 scripts/check-cycles.py [ROOT]               # exit 1 on a cycle; run by `make test`
    python3 scripts/check-cycles.py --functions [ROOT]   # functions over 80 lines, longest first
    python3 scripts/check-cycles.py --functions --max N  # exit 1 on one over N lines that
                                                         # scripts/long-functions.allow does not name
    python3 scripts/check-cycles.py --self-test          # the checks on a made-up crate

ROOT defaults to the checkout holding this script. Standard library only: it runs before cargo has
built anything. It reads source text, not the compiler's view, so it is a careful approximation:
- comments and string/char literals are blanked first, so they never count;
- `use` trees are expanded (groups, nesting, `self`, `as`, several lines);
- a path names the file of its longest module prefix, and also the file an item comes from when
  that module only re-exports it (`pub use engine::*;` in a facade mod.rs must not hide a cycle);
- a module imported by name (`use crate::storage;` then `storage::local::X`) is followed;
- the crate root and a parent declaring or re-exporting its own child are not edges; a child
  using its parent (`super::Thing`) is;
- `#[cfg(test)]` modules count: they are compiled imports like any other.
"""
import argparse
import bisect
import os
import re
import sys
import tempfile
from collections import deque

IDENT = r'[A-Za-z_][A-Za-z0-9_]*'
SKIP_DIRS = {'target', 'node_modules', '.git'}
DEFAULT_OVER = 80
ALLOW_FILE = os.path.join('scripts', 'long-functions.allow')


# ---------------------------------------------------------------------------------------------
# Source text
# ---------------------------------------------------------------------------------------------

def blank(src):
    """The source with comments and string/char literals replaced by spaces.

    Newlines are kept, so offsets and line numbers still point into the original file. Without
    this, `// see crate::x` or an SQL string would count as imports, and a `}` in a string would
    end a function early."""
    out = list(src)
    n = len(src)
    i = 0

    def wipe(a, b):
        for k in range(a, b):
            if out[k] != '\n':
                out[k] = ' '

    while i < n:
        c = src[i]
        nxt = src[i + 1] if i + 1 < n else ''
        if c == '/' and nxt == '/':                      # line comment, doc comments included
            j = src.find('\n', i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
        elif c == '/' and nxt == '*':                    # block comments nest in Rust
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith('/*', j):
                    depth, j = depth + 1, j + 2
                elif src.startswith('*/', j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            wipe(i, j)
            i = j
        elif c in 'rbc' and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == '_')) and \
                (m := re.match(r'(?:b|c)?r(#*)"', src[i:i + 300])):
            # Raw string: no escapes, ends at a quote followed by as many hashes as it opened with.
            end = src.find('"' + m.group(1), i + m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
            wipe(i, j)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == '\\' else 1
            wipe(i, j + 1)
            i = j + 1
        elif c == "'":
            # A char literal ('x', '\n', '\u{..}', b'"') or a lifetime/label ('a, 'static): only
            # the literal is blanked, since `'"'` would otherwise open a string.
            if nxt == '\\':
                j = i + 1                             # on the backslash: escapes step two at a time
                while j < n and src[j] != "'" and src[j] != '\n':
                    j += 2 if src[j] == '\\' else 1
                wipe(i, j + 1)
                i = j + 1
            elif i + 2 < n and src[i + 2] == "'" and nxt != '\n':
                wipe(i, i + 3)
                i += 3
            else:
                i += 1
        else:
            i += 1
    return ''.join(out)


def matching_brace(text, open_at):
    """Offset of the `}` closing the `{` at open_at (text already blanked), or len(text)."""
    depth = 0
    for j in range(open_at, len(text)):
        if text[j] == '{':
            depth += 1
        elif text[j] == '}':
            depth -= 1
            if depth == 0:
                return j
    return len(text)


class Lines:
    """Offset -> 1-based line number."""

    def __init__(self, text):
        self.starts = [0] + [m.end() for m in re.finditer('\n', text)]

    def __call__(self, offset):
        return bisect.bisect_right(self.starts, offset)


# ---------------------------------------------------------------------------------------------
# Crates and files
# ---------------------------------------------------------------------------------------------

def find_crates(root):
    """Source folders of the crates to check: every folder under app/ with a src/ and either a
    Cargo.toml or a src/lib.rs|main.rs (a crate being split out may have its sources before its
    manifest; checking it early costs nothing), plus server/src."""
    found = []
    app = os.path.join(root, 'app')
    for here, dirs, names in os.walk(app):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith('.'))
        src = os.path.join(here, 'src')
        if os.path.isdir(src) and ('Cargo.toml' in names or os.path.isfile(os.path.join(src, 'lib.rs'))
                                   or os.path.isfile(os.path.join(src, 'main.rs'))):
            found.append(src)
        # A crate's own src/ is walked by rs_files, not searched for more crates.
        if 'src' in dirs:
            dirs.remove('src')
    server = os.path.join(root, 'server', 'src')
    if os.path.isdir(server):
        found.append(server)
    return found


def rs_files(src_dir):
    """{path relative to src_dir: text} for the crate's .rs files, leaving out nested crates."""
    files = {}
    for here, dirs, names in os.walk(src_dir):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith('.')
                         and not os.path.isfile(os.path.join(here, d, 'Cargo.toml')))
        for name in sorted(names):
            if name.endswith('.rs'):
                full = os.path.join(here, name)
                with open(full, encoding='utf-8', errors='replace') as f:
                    files[os.path.relpath(full, src_dir).replace(os.sep, '/')] = f.read()
    return files


def module_of(rel):
    """Module path (a tuple) of a file: `a/b.rs` -> (a, b), `a/mod.rs` -> (a,), lib.rs -> ().
    Binary roots (main.rs, bin/*) are roots too: `crate::` in them names their own crate."""
    parts = rel[:-3].split('/')
    if parts in (['lib'], ['main']) or parts[0] == 'bin':
        return ()
    if parts[-1] == 'mod':
        parts = parts[:-1]
    return tuple(parts)


# ---------------------------------------------------------------------------------------------
# References: use trees and paths
# ---------------------------------------------------------------------------------------------

USE_RE = re.compile(r'(?<![\w$])use\s+')
TOKEN_RE = re.compile(r'\s*(::|\{|\}|,|\*|' + IDENT + r')')
# A path starting with crate/super/self, not `$crate` (resolved where a macro expands) nor the
# tail of a longer path (`a::super` is not valid; `x::crate` is not ours).
PATH_RE = re.compile(r'(?<![\w$:])(crate|super|self)((?:\s*::\s*' + IDENT + r')+)')
VIS_IN_RE = re.compile(r'pub\s*\(\s*in\s[^)]*\)')
INLINE_MOD_RE = re.compile(r'(?<![\w$])mod\s+(' + IDENT + r')\s*\{')


def parse_use_tree(body):
    """Expand a use tree into (segments, local name) pairs.

    `crate::{a::b, c::{self, d as e}, f::*}` gives (crate,a,b)/b, (crate,c)/c, (crate,c,d)/e and
    (crate,f)/None: a glob names its module but binds no one name we could follow."""
    tokens = TOKEN_RE.findall(body)
    out = []
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def tree(prefix):
        nonlocal pos
        segs = list(prefix)
        while True:
            t = peek()
            if t == '{':
                pos += 1
                while peek() not in ('}', None):
                    tree(segs)
                    if peek() == ',':
                        pos += 1
                pos += 1
                return
            if t == '*':
                pos += 1
                out.append((tuple(segs), None))
                return
            if t is None or not re.fullmatch(IDENT, t):
                return                                # malformed: keep what we have, no guess
            pos += 1
            if not (t == 'self' and segs):            # `a::{self}` is `a` itself
                segs.append(t)
            if peek() == '::':
                pos += 1
                continue
            local = segs[-1] if segs[-1] not in ('crate', 'super', 'self') else None
            if peek() == 'as':
                local = tokens[pos + 1] if pos + 1 < len(tokens) else None
                pos += 2
            out.append((tuple(segs), None if local == '_' else local))
            return

    if peek() == '::':                                # `use ::dep::x`: another crate
        return []
    tree(())
    return out


def inline_modules(text):
    """[(start, end, name)] of the `mod x { ... }` blocks in a file: inside one, `super` and
    `self` are relative to that inline module, not to the file."""
    spans = []
    for m in INLINE_MOD_RE.finditer(text):
        spans.append((m.start(), matching_brace(text, m.end() - 1), m.group(1)))
    return spans


def inline_path(spans, offset):
    return tuple(name for start, end, name in spans if start <= offset <= end)


def resolve(segs, here, children=()):
    """Absolute module path of `segs` written in module `here`, or None if it is not ours.

    `children` are the modules the file declares (`mod x;` / `mod x { }`): in a use declaration
    `engine::Registry` means `self::engine::Registry` when `engine` is one of them."""
    if not segs:
        return None
    if segs[0] in children:
        segs = ('self',) + tuple(segs)
    if segs[0] not in ('crate', 'super', 'self'):
        return None                                   # std, a dependency, a local name
    base = [] if segs[0] == 'crate' else list(here)
    rest = segs[1:] if segs[0] in ('crate', 'self') else segs
    i = 0
    while i < len(rest) and rest[i] in ('super', 'self'):
        if rest[i] == 'super':
            if not base:
                return None                           # above the crate root: not a real path
            base.pop()
        i += 1
    return tuple(base) + tuple(s for s in rest[i:] if s not in ('super', 'self'))


PUB_BEFORE_RE = re.compile(r'pub\s*(?:\([^)]*\))?\s*$')
DECLARED_MOD_RE = re.compile(r'(?<![\w$])mod\s+(' + IDENT + r')\s*[;{]')
DEFINED_RE = re.compile(r'(?<![\w$])(?:struct|enum|union|trait|type|fn|const|static|mod)\s+(' + IDENT +
                        r')|macro_rules!\s*(' + IDENT + r')')


class FileRefs:
    """What one file refers to, and what it offers others (for following re-exports)."""

    def __init__(self, text, file_mod):
        line_of = Lines(text)
        spans = inline_modules(text)
        children = set(DECLARED_MOD_RE.findall(text))
        self.refs = []                                # (absolute path, line, spelled path)
        self.reexports = {}                           # name -> absolute path (`pub use a::b as name`)
        self.globs = []                               # absolute paths of `pub use a::*`
        self.defined = {a or b for a, b in DEFINED_RE.findall(text)}
        masked = list(VIS_IN_RE.sub(lambda m: ' ' * len(m.group()), text))
        aliases = {}                                  # local name -> module path it was bound to
        for m in USE_RE.finditer(text):
            end = text.find(';', m.end())
            if end < 0:
                continue
            inline = inline_path(spans, m.start())
            here = file_mod + inline
            line_start = text.rfind('\n', 0, m.start()) + 1
            public = not inline and PUB_BEFORE_RE.search(text, line_start, m.start()) is not None
            for segs, local in parse_use_tree(text[m.end():end]):
                target = resolve(segs, here, children if not inline else ())
                if target is None:
                    continue
                self.refs.append((target, line_of(m.start()), '::'.join(segs)))
                if local:
                    aliases[local] = target
                    if public:
                        self.reexports[local] = target
                elif public:
                    self.globs.append(target)
            # Hidden from the path scan below: `use crate::a::{b, c}` must not also count as
            # a reference to `crate::a` itself.
            for k in range(m.start(), end):
                if masked[k] != '\n':
                    masked[k] = ' '
        masked = ''.join(masked)
        for m in PATH_RE.finditer(masked):
            segs = (m.group(1),) + tuple(re.findall(IDENT, m.group(2)))
            target = resolve(segs, file_mod + inline_path(spans, m.start()))
            if target is not None:
                self.refs.append((target, line_of(m.start()), '::'.join(segs)))
        # A module imported by name and then used through it: `storage::local::X` after
        # `use crate::storage;` reaches storage/local.rs, not only storage/mod.rs.
        if aliases:
            alias_re = re.compile(r'(?<![\w$:.])(' + '|'.join(map(re.escape, aliases)) +
                                  r')((?:\s*::\s*' + IDENT + r')+)')
            for m in alias_re.finditer(masked):
                tail = tuple(re.findall(IDENT, m.group(2)))
                self.refs.append((aliases[m.group(1)] + tail, line_of(m.start()),
                                  m.group(1) + '::' + '::'.join(tail)))


def crate_graph(src_dir):
    """(files, edges): edges[a] = {b: (line, spelled path)} for files a, b of one crate."""
    files = rs_files(src_dir)
    # Module path -> file. The roots are left out: a path that only resolves to the root is
    # an item of lib.rs/main.rs, which every file may use.
    mods = {}
    for rel in files:
        if module_of(rel):
            mods.setdefault(module_of(rel), rel)
    info = {rel: FileRefs(blank(src), module_of(rel)) for rel, src in files.items()}

    def owner(path):
        """The longest prefix of path that is a file's module: `crate::a::b::Thing` is a/b.rs."""
        while path and path not in mods:
            path = path[:-1]
        return path

    def homes(path, depth=0):
        """Files a path depends on: the file of its module and, when that file only re-exports
        the item (`pub use engine::Registry;`, `pub use engine::*;`), the file defining it.
        Without the second, a facade mod.rs would hide every cycle that runs through it."""
        mod = owner(path)
        if not mod:
            return []
        found = [(mod, mods[mod])]
        rest = path[len(mod):]
        if not rest or depth > 8:
            return found
        here = info[mods[mod]]
        name = rest[0]
        if name in here.reexports:
            found += homes(here.reexports[name] + rest[1:], depth + 1)
        elif name not in here.defined:
            for glob in here.globs:
                g = owner(glob)
                if g and g != mod and (name in info[mods[g]].defined or name in info[mods[g]].reexports):
                    found += homes(glob + rest, depth + 1)
                    break
        return found

    edges = {rel: {} for rel in files}
    for rel in files:
        me = module_of(rel)
        if not me:
            continue                                  # the root declares every module: not an edge
        for path, line, spelled in info[rel].refs:
            for mod, dest in homes(path):
                if dest == rel or mod[:-1] == me:
                    continue                          # itself, or a parent declaring its child
                edges[rel].setdefault(dest, (line, spelled))
    return files, edges


def strongly_connected(nodes, edges):
    """Tarjan's algorithm, iteratively (no recursion limit on deep graphs)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(sorted(comp))
    return out


def shortest_cycle(start, members, edges):
    """A shortest cycle start -> ... -> start inside one component (breadth first)."""
    members = set(members)
    prev = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(edges[node]):
            if nxt == start:
                path = [node]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return path[::-1] + [start]
            if nxt in members and nxt not in prev:
                prev[nxt] = node
                queue.append(nxt)
    return [start]


def check_cycles(root, out=print):
    crates = find_crates(root)
    n_files, problems = 0, []
    for src_dir in crates:
        files, edges = crate_graph(src_dir)
        n_files += len(files)
        shown = os.path.relpath(src_dir, root).replace(os.sep, '/')
        for comp in strongly_connected(sorted(files), edges):
            if len(comp) < 2:
                continue
            cycle = shortest_cycle(comp[0], comp, edges)
            first_dir = os.path.dirname(cycle[0])
            hops = [f'{shown}/{cycle[0]}'] + [os.path.relpath(p, first_dir or '.').replace(os.sep, '/')
                                               for p in cycle[1:]]
            lines = ['  ' + ' -> '.join(hops)]
            for a, b in zip(cycle, cycle[1:]):
                line, spelled = edges[a][b]
                lines.append(f'      {shown}/{a}:{line} uses {spelled}')
            if len(comp) > len(cycle) - 1:
                lines.append(f'      ({len(comp)} files reach each other: {", ".join(comp)})')
            problems.append('\n'.join(lines))
    if problems:
        out(f'cycles: {len(problems)} import cycle(s) between files of one crate '
            '(move the shared part into a file both can use, or up into a lower crate):')
        for p in problems:
            out(p)
        return 1
    out(f'cycles: ok ({len(crates)} crates, {n_files} files, no import cycle at any length)')
    return 0


# ---------------------------------------------------------------------------------------------
# Long functions
# ---------------------------------------------------------------------------------------------

FN_RE = re.compile(r'(?<![\w$])fn\s+(' + IDENT + r')')
CFG_TEST_RE = re.compile(r'#\[\s*cfg\s*\(\s*(?:all\s*\(\s*)?test\b[^\]]*\]')
AFTER_ATTRS_MOD_RE = re.compile(r'(?:\s*#\[[^\]]*\])*\s*(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(' + IDENT + r')\s*([{;])')
TEST_ATTR_RE = re.compile(r'#\[\s*(?:' + IDENT + r'\s*::\s*)*test\b')


def test_regions(text):
    """(spans of `#[cfg(test)] mod x { }` blocks, names of `#[cfg(test)] mod x;` files)."""
    spans, test_files = [], []
    for m in CFG_TEST_RE.finditer(text):
        mm = AFTER_ATTRS_MOD_RE.match(text, m.end())
        if not mm:
            continue
        if mm.group(2) == '{':
            spans.append((m.start(), matching_brace(text, mm.end() - 1)))
        else:
            test_files.append(mm.group(1))
    return spans, test_files


def functions(text):
    """[(name, first line offset, length in lines)] of the functions with a body in a file,
    leaving out test modules and #[test]-like functions."""
    spans, _ = test_regions(text)
    line_of = Lines(text)
    found = []
    for m in FN_RE.finditer(text):
        if any(a <= m.start() <= b for a, b in spans):
            continue
        # The attributes right before `fn`: from the end of the previous item or statement.
        head_start = max(text.rfind(c, 0, m.start()) for c in ';{}')
        if TEST_ATTR_RE.search(text, head_start + 1, m.start()):
            continue
        # The body is the first `{` outside (), [] — a `;` there first means no body (a trait
        # method's signature); `[u8; 4]` in a signature is inside brackets.
        depth, j, body = 0, m.end(), None
        while j < len(text):
            c = text[j]
            if c in '([':
                depth += 1
            elif c in ')]':
                depth -= 1
            elif depth == 0 and c == ';':
                break
            elif depth == 0 and c == '{':
                body = j
                break
            j += 1
        if body is None:
            continue
        close = matching_brace(text, body)
        found.append((m.group(1), line_of(m.start()), line_of(close) - line_of(m.start()) + 1))
    return found


def read_allow(root):
    """{'path::fn': reason} from scripts/long-functions.allow; a line without a reason is an error."""
    path = os.path.join(root, ALLOW_FILE)
    allowed, bad = {}, []
    if os.path.isfile(path):
        with open(path, encoding='utf-8') as f:
            for n, raw in enumerate(f, 1):
                line = raw.strip()
                if not line or line.startswith('#'):
                    continue
                entry, _, reason = line.partition('#')
                if not reason.strip():
                    bad.append(f'{ALLOW_FILE}:{n}: {entry.strip()} has no `# reason`')
                allowed[entry.strip()] = reason.strip()
    return allowed, bad


def check_functions(root, over=DEFAULT_OVER, max_lines=None, out=print):
    if max_lines is not None:
        over = min(over, max_lines)                   # --max 60 must see the 61-line ones too
    long = []
    for src_dir in find_crates(root):
        shown = os.path.relpath(src_dir, root).replace(os.sep, '/')
        files = rs_files(src_dir)
        texts = {rel: blank(src) for rel, src in files.items()}
        # Files that a `#[cfg(test)] mod x;` makes test-only, and everything below them.
        test_mods = set()
        for rel, text in texts.items():
            test_mods |= {module_of(rel) + (name,) for name in test_regions(text)[1]}
        for rel, text in texts.items():
            me = module_of(rel)
            if '/tests/' in f'/{rel}' or any(me[:len(t)] == t for t in test_mods):
                continue
            for name, line, length in functions(text):
                if length > over:
                    long.append((length, f'{shown}/{rel}', line, name))
    long.sort(key=lambda x: (-x[0], x[1], x[2]))
    allowed, bad = read_allow(root) if max_lines is not None else ({}, [])
    failing = []
    for length, path, line, name in long:
        key = f'{path}::{name}'
        mark = ''
        if max_lines is not None and length > max_lines:
            if key in allowed:
                mark = '  (allowed)'
            else:
                mark = f'  (over {max_lines})'
                failing.append(key)
        out(f'{path}:{line} {name} {length}{mark}')
    out(f'functions: {len(long)} non-test function(s) over {over} lines')
    if max_lines is None:
        return 0
    present = {f'{p}::{n}' for ln, p, _, n in long if ln > max_lines}
    for key in sorted(set(allowed) - present):
        out(f'functions: note: {ALLOW_FILE} names {key}, which is no longer over {max_lines} lines')
    for b in bad:
        out(f'functions: {b}')
    if failing:
        out(f'functions: {len(failing)} over {max_lines} lines not in {ALLOW_FILE}: split them, '
            'or add `path::fn  # reason`')
    return 1 if failing or bad else 0


# ---------------------------------------------------------------------------------------------
# Self-test
# ---------------------------------------------------------------------------------------------

def self_test():
    """Run both checks on a made-up crate: the cycle must be found, the decoys must not count."""
    def write(root, rel, text):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)

    failures = []
    with tempfile.TemporaryDirectory(prefix='check-cycles-') as root:
        write(root, 'app/Cargo.toml', '[package]\nname = "fake"\n')
        write(root, 'app/src/lib.rs', 'pub mod a;\npub mod b;\npub mod c;\npub mod f;\npub mod g;\npub mod p;\npub mod q;\n'
              'pub struct Root;\n')
        # a -> b by a multi-line nested use group, b -> c by super::, c -> a by crate:: in code.
        write(root, 'app/src/a.rs', 'use crate::{\n    q,\n    b::{self, Inner},\n};\npub struct A;\n')
        write(root, 'app/src/b.rs', 'pub struct Inner;\npub fn f() -> super::c::C { todo!() }\n')
        write(root, 'app/src/c.rs', 'pub struct C;\npub fn g() { let _ = crate::a::A; }\n'
              '// crate::q::Nope in a comment\nconst S: &str = "crate::q::Nope in a string";\n'
              'const R: &str = r#"super::q "quoted""#;\nfn h() -> char { \'"\' }\n'
              'fn k() -> [char; 2] { [\'\\\\\', \'\\\'\'] }\nconst T: &str = "crate::q::Nope";\n'
              'fn uses_root() -> crate::Root { crate::Root }\n')
        # A parent re-exporting its child is not a cycle; the child using its parent is an edge.
        write(root, 'app/src/p/mod.rs', 'mod kid;\npub use kid::Kid;\npub use self::kid::Other;\n'
              'pub struct Parent;\n')
        write(root, 'app/src/p/kid.rs', 'pub struct Kid; pub struct Other;\n'
              'fn f() -> super::Parent { todo!() }\n'
              '#[cfg(test)]\nmod tests {\n    use super::*;\n}\n')
        # q uses nothing of a; its test module's `super` is q itself, not the crate root.
        write(root, 'app/src/q.rs', 'pub fn q() {}\n#[cfg(test)]\nmod tests { use super::q; }\n')
        # A facade: g uses crate::f::Reg, defined in f/engine.rs behind `pub use engine::*`.
        write(root, 'app/src/f/mod.rs', 'mod engine;\npub use engine::*;\n')
        write(root, 'app/src/f/engine.rs', 'pub struct Reg;\nfn f() -> crate::g::G { todo!() }\n')
        write(root, 'app/src/g.rs', 'pub struct G;\npub fn g(_: crate::f::Reg) {}\n')
        # A second crate with a two-file cycle through super::super and a named module import.
        write(root, 'app/domains/x/src/lib.rs', 'pub mod m;\n')
        write(root, 'app/domains/x/src/m/mod.rs', 'pub mod deep;\npub mod n;\n')
        write(root, 'app/domains/x/src/m/deep/mod.rs', 'pub mod leaf;\n')
        write(root, 'app/domains/x/src/m/deep/leaf.rs', 'fn f() { super::super::n::g(); }\n')
        write(root, 'app/domains/x/src/m/n.rs', 'use crate::m::deep;\npub fn g() { deep::leaf::h(); }\n')

        lines = []
        code = check_cycles(root, out=lines.append)
        text = '\n'.join(lines)
        if code != 1:
            failures.append('a cycle was not reported (exit 0)')
        if 'app/src/a.rs -> b.rs -> c.rs -> a.rs' not in text:
            failures.append('the 3-file cycle a -> b -> c -> a is not printed')
        if 'app/domains/x/src/m/deep/leaf.rs -> ../n.rs -> leaf.rs' not in text:
            failures.append('the super::super / named-module cycle in the second crate is missing')
        if 'app/src/f/engine.rs -> ../g.rs -> engine.rs' not in text:
            failures.append('the cycle through a glob re-export (facade mod.rs) is missing')
        if 'q.rs' in text or 'p/mod.rs' in text or 'p/kid.rs' in text:
            failures.append('a decoy (comment, string, test module, parent/child) made a cycle')
        _, edges = crate_graph(os.path.join(root, 'app/src'))
        if 'p/mod.rs' not in edges['p/kid.rs']:
            failures.append('child -> parent (super::Parent) is not an edge')
        if edges['p/mod.rs'] or edges['q.rs'] or 'q.rs' in edges['c.rs']:
            failures.append(f'spurious edges: {edges}')
        if set(edges['a.rs']) != {'b.rs', 'q.rs'}:
            failures.append(f'a.rs edges {edges["a.rs"]} (expected b.rs and q.rs)')

        # Long functions: one of 85 lines, a #[test] of 100, one in a test module, one 82-line
        # with braces in strings and chars; --max 81 fails unless the allow-list names them.
        body = '    let _ = 1;\n'
        write(root, 'app/src/long.rs',
              'pub fn long_one() {\n' + body * 83 + '}\n'
              '#[test]\nfn a_test() {\n' + body * 98 + '}\n'
              'pub fn tricky() {\n    let _ = "}}}";\n    let _ = \'}\';\n' + body * 78 + '}\n'
              '#[cfg(test)]\nmod tests {\n    fn helper() {\n' + body * 120 + '    }\n}\n'
              'pub fn short() {}\n')
        lines = []
        check_functions(root, out=lines.append)
        got = [l.split()[1:] for l in lines if l.startswith('app/src/long.rs')]
        if got != [['long_one', '85'], ['tricky', '82']]:
            failures.append(f'long functions: {got} (expected long_one 85, tricky 82)')
        if check_functions(root, max_lines=81, out=lambda s: None) != 1:
            failures.append('--max 81 did not fail')
        write(root, ALLOW_FILE, 'app/src/long.rs::long_one  # generated table\n'
              'app/src/long.rs::tricky  # test\n')
        if check_functions(root, max_lines=81, out=lambda s: None) != 0:
            failures.append('--max 81 failed although the allow-list names both')

    if failures:
        print('self-test: FAILED\n  ' + '\n  '.join(failures))
        return 1
    print('self-test: ok')
    return 0


def check_domains(root, out=print):
    """What cargo cannot refuse on its own: a domain naming another domain as a dependency in
    its Cargo.toml (cargo would build it). Each crate under app/domains/ may depend, among the
    workspace's crates, only on the shared ones (common, kernel); returns 0 or 1."""
    import tomllib
    domains_dir = os.path.join(root, 'app', 'domains')
    if not os.path.isdir(domains_dir):
        return 0
    domains = sorted(d for d in os.listdir(domains_dir) if os.path.isfile(os.path.join(domains_dir, d, 'Cargo.toml')))
    shared = {'common', 'kernel'}
    problems = []
    for d in domains:
        with open(os.path.join(domains_dir, d, 'Cargo.toml'), 'rb') as f:
            manifest = tomllib.load(f)
        for section in ('dependencies', 'dev-dependencies', 'build-dependencies'):
            for name, spec in manifest.get(section, {}).items():
                local = isinstance(spec, dict) and ('path' in spec or spec.get('workspace') and name in domains)
                if (name in domains or local) and name not in shared:
                    problems.append(f'app/domains/{d}/Cargo.toml: [{section}] {name} — a domain depends only on common and kernel; '
                                    'go through a trait the kernel declares, or compose in app')
    if problems:
        out('domains: ' + '\n         '.join(problems))
        return 1
    out(f'domains: ok ({len(domains)} domains, each depending on common and kernel only)')
    return 0


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('root', nargs='?', default=here, help='checkout to check (default: this one)')
    ap.add_argument('--functions', action='store_true', help=f'list functions over {DEFAULT_OVER} lines')
    ap.add_argument('--max', type=int, metavar='N', help=f'with --functions: fail on one over N lines '
                    f'that {ALLOW_FILE} does not name')
    ap.add_argument('--self-test', action='store_true', help='check the checks on a made-up crate')
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if args.max is not None and not args.functions:
        ap.error('--max goes with --functions')
    if args.functions:
        return check_functions(args.root, max_lines=args.max)
    return check_cycles(args.root) | check_domains(args.root)


if __name__ == '__main__':
    sys.exit(main())
