#!/usr/bin/env python3
"""Helper of benches/spam.sh: fetches N challenges from a running Ebb and solves them (ALTCHA v1:
find number <= maxnumber with SHA-256(salt + number) = challenge), writing one urlencoded form body
per line: a distinct visitor's submission with its own proof of work; and to OUT.invalid the same
bodies with a wrong number (well-formed and signed, so the server does the whole check and finds
it wrong).
    python3 benches/spam-proofs.py BASE_URL N OUT"""
import base64, hashlib, http.client, json, sys, urllib.parse

base, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
u = urllib.parse.urlsplit(base)
conn = http.client.HTTPConnection(u.hostname, u.port)
def body(i, c, target, number):
    payload = base64.b64encode(json.dumps({"algorithm": c["algorithm"], "challenge": target, "number": number,
                                           "salt": c["salt"], "signature": c["signature"]}).encode()).decode()
    return urllib.parse.urlencode({"name": f"Bench {i}", "email": "bench@example.org",
                                   "message": "Hello from the benchmark.\nSecond line.", "altcha": payload}) + "\n"

with open(out, "w") as f, open(out + ".invalid", "w") as bad:
    for i in range(n):
        conn.request("GET", "/api/contact/challenge")
        c = json.loads(conn.getresponse().read())
        target = c["challenge"]
        salt = c["salt"].encode()
        for number in range(c["maxnumber"] + 1):
            if hashlib.sha256(salt + str(number).encode()).hexdigest() == target:
                break
        else:
            sys.exit("unsolvable challenge")
        f.write(body(i, c, target, number))
        bad.write(body(i, c, target, (number + 1) % (c["maxnumber"] + 1)))
