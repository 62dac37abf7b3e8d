#!/usr/bin/env python3
"""Checks Ebb's audit trail offline, with nothing but a copy of the storage and the public keys.

An independent implementation of the auditor guide's (docs/auditor.md) "How to verify the audit trail" (encoding
ebb-audit-v1, digests ebb-audit-digest-v1, restore statements ebb-audit-restore-v1): it shares no
code with Ebb, and Ebb's tests run it beside `ebb audit verify --offline` to prove the two agree.

    python3 scripts/audit-verify.py --store DIR [--keys keys.json] [--json]

DIR holds `audit-digests/` and `audit-archive/` as in the bucket (or the local storage folder).
Needs Python 3.9+ and the `cryptography` package (Debian: python3-cryptography). Exit 0: the trail
verifies; 1: it does not (the first break is named); 2: usage or I/O error.
"""
import argparse
import gzip
import hashlib
import json
import os
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

GENESIS = "00" * 32


# --- The encoding (docs/auditor.md: "Canonical bytes") ------------------------------------------------
def field(v):
    if v is None:
        return b"\x00"
    b = v.encode("utf-8")
    return b"\x01" + len(b).to_bytes(4, "big") + b


def event_hash(prev_hex, values):
    """values: id, occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail,
    client_hash, seq — as text, None for NULL."""
    canonical = b"ebb-audit-v1" + b"".join(field(v) for v in values)
    return hashlib.sha256(bytes.fromhex(prev_hex) + canonical).hexdigest()


# --- PostgreSQL's CSV: a quoted field is text (even empty), an unquoted empty field is NULL ----
def csv_records(text):
    i, n = 0, len(text)
    while i < n:
        row = []
        while True:
            if i < n and text[i] == '"':
                j, parts = i + 1, []
                while True:
                    k = text.index('"', j)
                    parts.append(text[j:k])
                    if k + 1 < n and text[k + 1] == '"':
                        parts.append('"')
                        j = k + 2
                    else:
                        i = k + 1
                        break
                row.append("".join(parts))
            else:
                j = i
                while i < n and text[i] not in ",\r":
                    i += 1
                row.append(text[j:i] or None)
            if i < n and text[i] == ",":
                i += 1
                continue
            i += 2  # CRLF
            break
        yield row


# --- The storage copy --------------------------------------------------------------------------
def listing(store, ns):
    d = os.path.join(store, ns)
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def read(store, ns, name):
    with open(os.path.join(store, ns, name), "rb") as f:
        return f.read()


def load_keys(store, keys_file):
    if keys_file:
        doc = json.load(open(keys_file))
        keys = doc.get("keys", [doc]) if isinstance(doc, dict) else doc
    else:
        keys = [json.loads(read(store, "audit-digests", n)) for n in listing(store, "audit-digests") if n.startswith("key-")]
    out = {}
    for k in keys:
        raw = bytes.fromhex(k["public_key"])
        if k.get("algorithm") == "ed25519" and hashlib.sha256(raw).hexdigest()[:16] == k["key_id"]:
            out[k["key_id"]] = Ed25519PublicKey.from_public_bytes(raw)
    return out


class Broken(Exception):
    def __init__(self, what, event=None, month=None, digest=None):
        super().__init__(what)
        self.place = {"event": event, "month": month, "digest": digest, "what": what}


def open_envelope(raw, keys, what):
    env = json.loads(raw)
    key = keys.get(env["key_id"])
    if key is None:
        raise Broken(f"{what} is signed by an untrusted key {env['key_id']}")
    try:
        key.verify(bytes.fromhex(env["signature"]), env["body"].encode("utf-8"))
    except InvalidSignature:
        raise Broken(f"{what}'s signature does not verify")
    body = json.loads(env["body"])
    if body["key_id"] != env["key_id"]:
        raise Broken(f"{what}'s body names another key")
    return body


def restore_statements(store, keys):
    """Signed restore statements: digest number -> the statement that supersedes it."""
    out = []
    for name in listing(store, "audit-digests"):
        if name.startswith("restore-") and name.endswith(".json"):
            st = open_envelope(read(store, "audit-digests", name), keys, f"restore statement {name}")
            if st["format"] != "ebb-audit-restore-v1" or name != f"restore-{st['first']:012d}.json" or st["last"] < st["first"]:
                raise Broken(f"restore statement {name} does not say what its name says")
            st["restored"] = {c["month"]: c["count"] for c in st["chains"]}
            out.append(st)
    return out


def check_digests(store, keys, statements):
    numbered = sorted((int(n[:-5]), n) for n in listing(store, "audit-digests") if n[:-5].isdigit() and n.endswith(".json"))
    superseded = {n: st for st in statements for n in range(st["first"], st["last"] + 1)}
    months, previous, expected, shas = {}, None, 1, {}
    for number, name in numbered:
        if number != expected:
            raise Broken(f"digest {expected} is missing", digest=expected)
        expected = number + 1
        raw = read(store, "audit-digests", name)
        try:
            body = open_envelope(raw, keys, f"digest {number}")
        except Broken as b:
            raise Broken(b.place["what"], digest=number)
        if body["format"] != "ebb-audit-digest-v1" or body["number"] != number:
            raise Broken(f"digest {number}'s body does not match its name", digest=number)
        if body["previous"] != previous:
            raise Broken(f"digest {number}'s back-link does not match digest {number - 1}", digest=number)
        previous = shas[number] = hashlib.sha256(raw).hexdigest()
        st = superseded.get(number)
        for m in body["months"]:
            if st and m["count"] > st["restored"].get(m["month"], 0):
                continue  # lost with the restore the statement records
            rec = months.setdefault(m["month"], {"checkpoints": [], "archived": None})
            rec["checkpoints"].append((number, m["count"], m["head"]))
            if m.get("archived"):
                rec["archived"] = (number, m["archived"], m["count"], m["head"])
    for st in statements:
        if st["first"] > 1 and shas.get(st["first"] - 1) != st["previous"]:
            raise Broken(f"the restore statement for digests {st['first']}-{st['last']} does not follow digest {st['first'] - 1}", digest=st["first"])
    return months, len(numbered)


def check_archive(store, name, rec):
    month = name[: -len(".csv.gz")]
    raw = read(store, "audit-archive", name)
    sha = hashlib.sha256(raw).hexdigest()
    rows = csv_records(gzip.decompress(raw).decode("utf-8"))
    header = next(rows, [])
    archived = rec["archived"] if rec else None
    if not archived:
        raise Broken("this archived month is recorded by no signed digest", month=month)
    # Archived before the chain: the old columns, or a digest recording an empty chain for it.
    if header[-3:] != ["seq", "prev_hash", "hash"] or archived[2] == 0:
        if archived and archived[1]["sha256"] != sha:
            raise Broken("the object's SHA-256 is not the one its digest recorded", month=month, digest=archived[0])
        return 0
    checkpoints = {c: (n, h) for n, c, h in (rec["checkpoints"] if rec else [])}
    prev, count, last = GENESIS, 0, None
    for row in rows:
        event = int(row[0])
        if count == 0 and row[10] != GENESIS:
            raise Broken("the month's first prev_hash is not the chain's start", event=event, month=month)
        if row[9] is None or int(row[9]) != count + 1:
            raise Broken(f"event {event} is not at place {count + 1}", event=event, month=month)
        h = event_hash(prev, row[:10])
        if h != row[11]:
            raise Broken(f"event {event} does not match its hash", event=event, month=month)
        count, prev, last = count + 1, h, event
        if count in checkpoints and checkpoints[count][1] != h:
            raise Broken(f"the chain up to event {event} is not the one a digest signed", event=event, month=month, digest=checkpoints[count][0])
    longest = max([c for c in checkpoints] + [archived[2] if archived else 0], default=0)
    if longest > count:
        raise Broken(f"a digest records {longest} events, the object has {count} (last {last})", month=month)
    if archived:
        if archived[2] != count or archived[3] != prev:
            raise Broken("the object's chain is not the one its digest recorded", month=month, digest=archived[0])
        if archived[1]["sha256"] != sha:
            raise Broken("the object's SHA-256 is not the one its digest recorded", month=month, digest=archived[0])
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", required=True)
    ap.add_argument("--keys")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = {"ok": True, "events": 0, "archived": 0, "digests": 0, "first": None}
    try:
        keys = load_keys(args.store, args.keys)
        statements = restore_statements(args.store, keys)
        result["warnings"] = [
            f"digests {st['first']} to {st['last']} are superseded: restored from a backup on {st['created_at']} ({st['reason']})" for st in statements
        ]
        months, result["digests"] = check_digests(args.store, keys, statements)
        # Zero digests passes only where none was due: no key published a day ago, nothing archived.
        day_ago = __import__("time").time() - 86400
        old_keys = [n for n in listing(args.store, "audit-digests") if n.startswith("key-")
                    and os.path.getmtime(os.path.join(args.store, "audit-digests", n)) < day_ago]
        if result["digests"] == 0 and (old_keys or listing(args.store, "audit-archive")):
            raise Broken("no digest is in the store, but digests were written (a key published a day ago, or an archived month)", digest=1)
        seen = set()
        for name in listing(args.store, "audit-archive"):
            if name.endswith(".csv.gz"):
                seen.add(name[:-7])
                result["events"] += check_archive(args.store, name, months.get(name[:-7]))
                result["archived"] += 1
        for month, rec in sorted(months.items()):
            if rec["archived"] and month not in seen:
                raise Broken("a digest records this month as archived but its object is missing", month=month, digest=rec["archived"][0])
    except Broken as b:
        result.update(ok=False, first=b.place)
    except (OSError, ValueError, KeyError) as e:
        print(f"audit-verify: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result))
    elif result["ok"]:
        for w in result.get("warnings", []):
            print(f"WARN: {w}")
        print(f"verifies: {result['events']} events in {result['archived']} archived months, {result['digests']} digests")
    else:
        print(f"BROKEN: {result['first']}")
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
