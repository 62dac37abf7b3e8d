#!/usr/bin/env python3
"""Watches Ebb's transparency log with no Ebb code (C2SP tlog-checkpoint, signed-note, tlog-tiles).

    python3 scripts/tlog-watch.py URL --keys ebb-audit-keys.json [--state FILE]

Checks the newest checkpoint's Ed25519 signature with your saved keys, recomputes its root and the
root of the checkpoint kept in --state from the log's tiles: equal, the new tree contains the old.
Exit 0: consistent (the new one is kept); 1: rolled back or forked (sizes named); 2: I/O error.
"""
import argparse, base64, contextlib, hashlib, json, sys, urllib.request
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

def broken(what):
    sys.exit(print(f"BROKEN: {what}") or 1)

def fetch(url): return urllib.request.urlopen(url, timeout=30).read()

def open_note(text, keys):
    """(size, root) of a checkpoint signed, as its origin, by one of `keys`."""
    head, _, sigs = text.partition("\n\n")
    origin, size, root = head.split("\n")[:3]
    for line in sigs.splitlines():
        name, _, sig = line.removeprefix("\u2014 ").partition(" ")
        raw = base64.b64decode(sig)
        for k in keys:
            pub = bytes.fromhex(k["public_key"])
            if name == origin and raw[:4] == hashlib.sha256(name.encode() + b"\n\x01" + pub).digest()[:4]:
                with contextlib.suppress(InvalidSignature):
                    Ed25519PublicKey.from_public_bytes(pub).verify(raw[4:], (head + "\n").encode())
                    return int(size), base64.b64decode(root)
    broken("the checkpoint is not signed by a trusted key")

def node(left, right): return hashlib.sha256(b"\x01" + left + right).digest()

def digits(n):
    s = f"{n % 1000:03d}"
    while n >= 1000:
        n //= 1000
        s = f"x{n % 1000:03d}/{s}"
    return s

class Tree:
    """The tree of `size` entries, read from the log's hash tiles (height 8)."""

    def __init__(self, base, size):
        self.base, self.size, self.tiles = base, size, {}
    def stored(self, tile_level, i):  # the i-th hash at tree level 8 * tile_level
        n, k = divmod(i, 256)
        width = min(256, (self.size >> (8 * tile_level)) - n * 256)
        path = f"{tile_level}/{digits(n)}" + (f".p/{width}" if width < 256 else "")
        if path not in self.tiles:
            self.tiles[path] = fetch(f"{self.base}/audit/tile/{path}")
        return self.tiles[path][32 * k:32 * k + 32]
    def subtree(self, level, k):  # the k-th complete subtree of 2**level entries
        low = level % 8
        hashes = [self.stored(level // 8, (k << low) + j) for j in range(1 << low)]
        while len(hashes) > 1:
            hashes = [node(hashes[j], hashes[j + 1]) for j in range(0, len(hashes), 2)]
        return hashes[0]
    def root(self, n):  # the root of the first n entries (RFC 6962)
        blocks, start = [], 0
        for level in range(63, -1, -1):
            if n >> level & 1:
                blocks.append(self.subtree(level, start >> level))
                start += 1 << level
        h = blocks.pop() if blocks else hashlib.sha256(b"").digest()
        for b in reversed(blocks):
            h = node(b, h)
        return h

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("url"), ap.add_argument("--keys", required=True), ap.add_argument("--state", default="ebb-audit-checkpoint.txt")
    args = ap.parse_args()
    base, keys = args.url.rstrip("/"), json.load(open(args.keys))["keys"]
    try:
        text = fetch(base + "/audit/checkpoint").decode()
        size, root = open_note(text, keys)
        tree = Tree(base, size)
        if tree.root(size) != root:
            broken(f"the log's tiles do not make the root its checkpoint of {size} entries signed")
        try:
            old_size, old_root = open_note(open(args.state).read(), keys)
        except FileNotFoundError:
            old_size = None
        if old_size is not None and size < old_size:
            broken(f"ROLLED BACK: the log had {old_size} entries, it now has {size}")
        if old_size is not None and tree.root(old_size) != old_root:
            broken(f"FORKED: the tree of {size} entries does not contain the tree of {old_size} entries seen before")
    except OSError as e:
        print(f"tlog-watch: {e}", file=sys.stderr)
        return 2
    open(args.state, "w").write(text)
    print(f"consistent: {old_size} -> {size} entries" if old_size is not None else f"first checkpoint: {size} entries")
    return 0

if __name__ == "__main__":
    sys.exit(main())
