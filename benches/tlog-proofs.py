#!/usr/bin/env python3
"""How long a tlog-tiles client waits for Ebb's transparency log (issue 53): the newest checkpoint,
and one inclusion proof — every hash tile on the path from a random entry to the root (C2SP
tlog-tiles: one tile per 8 levels, partial at the right edge) — fetched one after the other over
one kept-alive connection, as a client does. Beside it, the same number of requests to a path that
answers from memory (the floor of any request through Ebb on this machine).

    tlog-proofs.py HOST PORT SIZE SAMPLES FLOOR_PATH

Prints one BENCH line: p50/p99 in microseconds for the checkpoint, the proof, and the floor
(as many requests as one proof)."""
import http.client
import random
import sys
import time

HEIGHT, WIDTH = 8, 256


def tile_path(level, index, width):
    """A hash tile's path, spelled as C2SP tlog-tiles spells it (3-digit groups, x-prefixed)."""
    n, digits = index, "%03d" % (index % 1000)
    while n >= 1000:
        n //= 1000
        digits = "x%03d/%s" % (n % 1000, digits)
    return "/audit/tile/%d/%s%s" % (level, digits, "" if width == WIDTH else ".p/%d" % width)


def proof_tiles(leaf, size):
    """The tiles holding the hashes of an inclusion proof of `leaf` in a tree of `size`."""
    out, level = [], 0
    while True:
        nodes = size >> (HEIGHT * level)  # complete nodes at this tile level's bottom row
        if nodes == 0:
            break
        index = (leaf >> (HEIGHT * level)) >> HEIGHT
        width = min(WIDTH, nodes - index * WIDTH)
        out.append(tile_path(level, index, width))
        if nodes <= WIDTH:
            break
        level += 1
    return out


def get(conn, path):
    conn.request("GET", path)
    res = conn.getresponse()
    body = res.read()
    if res.status != 200:
        sys.exit("tlog-proofs: %s answered %d: %s" % (path, res.status, body[:200]))
    return body


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]


def main():
    host, port, size, samples, floor = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    conn = http.client.HTTPConnection(host, port)
    rng = random.Random(53)
    tiles = len(proof_tiles(0, size))
    for _ in range(50):  # warm-up
        get(conn, "/audit/checkpoint")
        for t in proof_tiles(rng.randrange(size), size):
            get(conn, t)
    cp, proof, base = [], [], []
    for _ in range(samples):
        t0 = time.perf_counter()
        get(conn, "/audit/checkpoint")
        t1 = time.perf_counter()
        for t in proof_tiles(rng.randrange(size), size):
            get(conn, t)
        t2 = time.perf_counter()
        for _ in range(tiles):
            get(conn, floor)
        t3 = time.perf_counter()
        cp.append(t1 - t0)
        proof.append(t2 - t1)
        base.append(t3 - t2)
    us = lambda s: int(s * 1e6)
    print("BENCH tiles_per_proof=%d checkpoint_p50_us=%d checkpoint_p99_us=%d proof_p50_us=%d proof_p99_us=%d floor_p50_us=%d floor_p99_us=%d"
          % (tiles, us(pct(cp, 50)), us(pct(cp, 99)), us(pct(proof, 50)), us(pct(proof, 99)), us(pct(base, 50)), us(pct(base, 99))))


if __name__ == "__main__":
    main()
