"""Check a results folder of interop/profiles/python-auth.toml (interop suite).

    check_auth.py DIR --sessions N

Passes when all N sessions ran, every session of `with-token` completed, every session
of `no-token` failed with http_status:401 (and nothing else failed), the 401's example
names the server's `resource_metadata`, the persona without a token walked the discovery
once (phase `auth`, without an error: once per run for a persona without `auth`),
and the tokens of interop/data/python-tokens.txt are in no file of DIR. Prints one line.
"""

import argparse
import json
import os
import sys

TOKENS = os.path.join(os.path.dirname(__file__), "data", "python-tokens.txt")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--sessions", type=int, required=True)
    a = ap.parse_args()
    with open(os.path.join(a.dir, "summary.json"), encoding="utf-8") as f:
        s = json.load(f)
    problems = []
    p = s.get("personas", {})
    good, bad = p.get("with-token", {}), p.get("no-token", {})
    if s["sessions"]["started"] != a.sessions:
        problems.append(f"started {s['sessions']['started']} sessions, want {a.sessions}")
    if not good.get("sessions") or good.get("completed") != good.get("sessions"):
        problems.append(f"with-token: {good.get('completed')} of {good.get('sessions')} completed")
    denied = bad.get("sessions", 0)
    if not denied or bad.get("failed") != denied:
        problems.append(f"no-token: {bad.get('failed')} of {denied} failed")
    if s.get("failures") != {"http_status:401": denied}:
        problems.append(f"failures {s.get('failures')}, want only {denied} http_status:401")
    example = str(s.get("failure_examples", {}).get("http_status:401", ""))
    if "resource_metadata=" not in example:
        problems.append(f"the 401 example names no resource_metadata: {example[:200]}")
    auth = s.get("phases", {}).get("auth", {})
    walks, walk_errors = auth.get("count", 0), auth.get("errors", 0)
    if walks != 1 or walk_errors != 0:
        problems.append(f"{walks} discovery walks (phase auth, {walk_errors} failed), want 1 that worked")
    with open(TOKENS, encoding="utf-8") as f:
        tokens = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    for root, _, files in os.walk(a.dir):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                text = f.read().decode("utf-8", "replace")
            if any(t in text for t in tokens):
                problems.append(f"{name} holds a token")
    if problems:
        print("; ".join(problems))
        return 1
    print(f"{good['sessions']} sessions with a token completed; {denied} without got 401, "
          f"the discovery walked once; findings {len(s.get('findings', []))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
