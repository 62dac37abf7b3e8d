#!/usr/bin/env python3
"""What each page's client costs over the wire (brotli, as served): the main module and its
loaders, plus every chunk and module the splitter's manifest lists for the page's lazy routes.

usage: benches/client-size.py <site-root>/pkg/<hash>

The admin pages are one module (app/src/admin_routes.rs), so the dashboard's client is all of it:
beside issue 36's goal (<= 150 KB brotli to an interactive dashboard) and its baseline (205 KB
main module plus chunks at the issue's filing). The dashboard opened by a page load works before
that client and fetches it on first use (app/src/dashboard_on_first_use.js): what it downloads
before is measured in Chromium by benches/first-visit.sh.
The sign-in page prefetches those files while the admin uses their passkey, so after sign-in
they come from the browser's cache; this counts them all the same. `/signin` opened directly
loads no wasm (its row is for a client-side navigation to it). KB = 1,000 bytes.
"""
import json
import os
import sys

GOAL_KB = 150
PAGES = {
    "/ (on first use)": None,
    "/signin (by navigation)": "ebb_signin",
    "/s/{token}": "ebb_share",
    "/r/{token}": "ebb_file_request",
    "/invite/{token}": "ebb_invite",
    "/retention": "ebb_public_retention",
    "/admin (dashboard)": "ebb_admin",
}


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    pkg = sys.argv[1].rstrip("/")
    manifest = json.load(open(os.path.join(pkg, "__wasm_split_manifest.json")))

    def br(name: str) -> int:
        path = os.path.join(pkg, name + ".br")
        if not os.path.exists(path):
            sys.exit(f"client-size: {path} is missing (scripts/build-client.sh precompresses every file)")
        return os.path.getsize(path)

    loaders = [f for f in os.listdir(pkg) if f.endswith(".js")]
    main_wasm = br("ebb_bg.wasm")
    main_js = sum(br(f) for f in loaders)
    print(f"bench: client {os.path.basename(pkg)}: main module {main_wasm:,} B brotli, loaders {main_js:,} B")
    print(f"{'page':22s} {'main+loaders':>12s} {'page modules':>13s} {'total':>10s}")
    for page, module in PAGES.items():
        extra = 0
        if module is not None:
            if module not in manifest:
                sys.exit(f"client-size: the manifest has no module {module}")
            extra = sum(br(f + ".wasm") for f in manifest[module])
        total = main_wasm + main_js + extra
        print(f"{page:22s} {main_wasm + main_js:>12,} {extra:>13,} {total:>10,}")
        if module == "ebb_admin":
            print(f"BENCH dashboard_client_kb={total / 1000:.1f} goal_kb={GOAL_KB} issue_baseline='205 KB main module + chunks'")


if __name__ == "__main__":
    main()
