#!/usr/bin/env python3
"""Checks the README and the docs/ book for dead links and stale paths (part of `make test`).

- Every relative Markdown link `[text](path#anchor)` names a file that exists and, with an anchor,
  a heading in it.
- Every path in backticks that starts at one of the repository's top folders
  (`server/src/http.rs`, `scripts/setup.sh`, `end2end/tests/`…) exists; a glob or placeholder
  (`*`, `…`, `{`, `<`, `YYYY`) is skipped.
- Every chapter the book's SUMMARY.md lists exists, and every docs/*.md is listed.
Exit 1 naming each problem as FILE:LINE.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = ("app/", "server/", "scripts/", "benches/", "end2end/", "migrations/", "docs/", "style/", "frontend/", "deploy/", ".ci/")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
TICK = re.compile(r"`([^`\s]+)`")


def slug(heading):
    """GitHub's (and mdBook's) anchor for a heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        return {slug(line.lstrip("#")) for line in f if line.startswith("#")}


def docs_files():
    files = [os.path.join(ROOT, "README.md")]
    docs = os.path.join(ROOT, "docs")
    if os.path.isdir(docs):
        files += sorted(os.path.join(docs, n) for n in os.listdir(docs) if n.endswith(".md"))
    return files


def ignored():
    """Folders the build or the tests make (.gitignore): named in the docs, absent in a clone."""
    try:
        with open(os.path.join(ROOT, ".gitignore"), encoding="utf-8") as f:
            return [l.strip().strip("/") for l in f if l.strip() and not l.startswith("#")]
    except OSError:
        return []


IGNORED = ignored()


def made_by_a_run(path):
    return any(path == g or path.startswith(g + "/") or path.endswith("/" + g) or ("/" + g + "/") in path or path.rstrip("/").endswith(g) for g in IGNORED)


def placeholder(word):
    """A path with a part to fill in: `app/domains/NAME`, `audit-archive/YYYY-MM.csv.gz`."""
    return any(re.fullmatch(r"[A-Z][A-Z_-]{2,}(\.[a-z.]+)?", part) or "YYYY" in part for part in word.split("/"))


def check(path, problems):
    here = os.path.dirname(path)
    rel = os.path.relpath(path, ROOT)
    in_code = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("```"):
                in_code = not in_code
                continue
            if in_code:
                continue
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue
                file, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(here, file)) if file else path
                if not os.path.exists(full):
                    problems.append(f"{rel}:{n}: dead link {target}")
                elif anchor and full.endswith(".md") and anchor not in anchors(full):
                    problems.append(f"{rel}:{n}: no heading #{anchor} in {os.path.relpath(full, ROOT)}")
            for word in TICK.findall(line):
                if not word.startswith(TOP) or any(c in word for c in "*…{<>|$") or placeholder(word):
                    continue
                candidate = word.split(":")[0].rstrip(".,;")
                if not os.path.exists(os.path.join(ROOT, candidate)) and not made_by_a_run(candidate.rstrip("/")):
                    problems.append(f"{rel}:{n}: stale path `{word}`")


def summary(problems):
    path = os.path.join(ROOT, "docs", "SUMMARY.md")
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as f:
        listed = {os.path.normpath(t.partition("#")[0]) for t in LINK.findall(f.read())}
    for name in os.listdir(os.path.dirname(path)):
        if name.endswith(".md") and name != "SUMMARY.md" and name not in listed:
            problems.append(f"docs/{name}: not listed in docs/SUMMARY.md")


def main():
    problems = []
    for path in docs_files():
        check(path, problems)
    summary(problems)
    for p in problems:
        print(p)
    if problems:
        print(f"check-docs: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"check-docs: {len(docs_files())} files, no dead link or stale path")
    return 0


if __name__ == "__main__":
    sys.exit(main())
