#!/usr/bin/env python3
"""Prove the Grafana dashboard without Grafana: run every panel query of
deploy/grafana/mcp-fleet.json against a Prometheus that received a run (--push
prometheus-rw=URL) and check each returns that run's figures, as summary.json (or
`merge`'s, for a sharded run) has them:

- whole-run panels (instant queries): counts equal, exactly; a percentile, and
  summary.json's, in the native bucket that holds its rank in the summed histogram (whose
  count must equal the phase's successful samples exactly); where the rank falls on a
  bucket's edge, the next bucket is allowed too (Prometheus 3 reads it so);
- time-series panels (range queries over the run): series present, with label values
  the run has, every value a number.

    check_panels.py --prometheus http://127.0.0.1:9090 --run LABEL \\
        --summary RESULTS/summary.json [--since UNIX_SECONDS] [--rate-interval 5s]

Exit 0: every panel query checked out; 1: one did not (each is named); 2: bad usage.
Only the standard library: it runs wherever python3 does.
"""

import argparse
import json
import math
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

DASHBOARD = Path(__file__).with_name("mcp-fleet.json")
OUTCOMES = ("completed", "failed", "interrupted", "unreachable")
# HDR's own precision (3 significant figures) around a bucket's bounds.
EPSILON = 1e-3


def query(base, expr, instant, since, until):
    if instant:
        params = {"query": expr, "time": f"{until:.3f}"}
        path = "/api/v1/query"
    else:
        params = {"query": expr, "start": f"{since:.3f}", "end": f"{until:.3f}", "step": "1"}
        path = "/api/v1/query_range"
    url = base.rstrip("/") + path + "?" + urllib.parse.urlencode(params)
    with urllib.request.urlopen(url, timeout=20) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(f"{expr}: {body}")
    out = {}
    for s in body["data"]["result"]:
        labels = {k: v for k, v in s["metric"].items() if k not in ("run", "shard")}
        key = "|".join(labels[k] for k in sorted(labels))
        points = [s["value"]] if "value" in s else s.get("values", [])
        out[key] = [float(p[1]) for p in points]
    return out


def histogram(base, run, phase, until):
    """The phase's native histogram summed over every series: count and buckets as
    (lower, upper, count), ascending."""
    expr = f'sum by (phase) (mcp_fleet_phase_duration_seconds{{run=~"{run}", phase="{phase}"}})'
    params = {"query": expr, "time": f"{until:.3f}"}
    url = base.rstrip("/") + "/api/v1/query?" + urllib.parse.urlencode(params)
    with urllib.request.urlopen(url, timeout=20) as r:
        result = json.load(r)["data"]["result"]
    if not result:
        return 0, []
    h = result[0]["histogram"][1]
    return float(h["count"]), [(float(b[1]), float(b[2]), float(b[3])) for b in h["buckets"]]


def rank_range(count, buckets, q):
    """Where the value at quantile q may be: from the lower bound of the bucket holding
    rank q·count to the upper bound of that bucket, or of the next one when the rank
    sits exactly on the bucket's upper edge."""
    rank, cum = q * count, 0.0
    for i, (lo, hi, n) in enumerate(buckets):
        cum += n
        if cum >= rank:
            if cum == rank and i + 1 < len(buckets):
                hi = buckets[i + 1][1]
            return lo, hi
    return None


def each(section, pick):
    return {k: v for k, e in (section or {}).items() if (v := pick(k, e)) is not None}


def nonzero(m):
    return {k: float(v) for k, v in m.items() if float(v) != 0.0}


def rule(title, ref, s):
    """(kind, expected): kind exact, quantile or over (time series)."""
    phases = s["phases"]
    session_count = lambda _k, e: e.get("session", {}).get("count")  # noqa: E731
    quantile = lambda field: ("quantile", each(phases, lambda _k, e: e[field] / 1e6 if field in e else None))  # noqa: E731
    findings = s.get("findings", [])
    watched = any(r["name"].startswith("server.") for r in s.get("resources", []))
    rules = {
        ("Sessions by outcome", "A"): lambda: ("exact", {o: s["sessions"][o] for o in OUTCOMES}),
        ("Sessions by persona", "A"): lambda: ("exact", each(s["personas"], lambda _k, e: e["sessions"])),
        ("Sessions by persona", "B"): lambda: ("exact", {
            f"{o}|{p}": e.get(o, 0) for p, e in s["personas"].items() for o in OUTCOMES}),
        ("Findings", "A"): lambda: ("exact", {f"{f['code']}|{f['severity']}": f["count"] for f in findings}),
        ("Latency per phase, whole run", "A"): lambda: ("exact", each(phases, lambda _k, e: e["count"])),
        ("Latency per phase, whole run", "B"): lambda: ("exact", each(phases, lambda _k, e: e["errors"])),
        ("Latency per phase, whole run", "C"): lambda: quantile("p50_us"),
        ("Latency per phase, whole run", "D"): lambda: quantile("p95_us"),
        ("Latency per phase, whole run", "E"): lambda: quantile("p99_us"),
        ("Failures by kind", "A"): lambda: ("exact", s["failures"]),
        ("Sessions by era and protocol version", "A"): lambda: ("exact", each(s["eras"], session_count)),
        ("Sessions by era and protocol version", "B"): lambda: ("exact", each(s["protocol_versions"], session_count)),
        ("Events", "A"): lambda: ("exact", s.get("counters", {})),
    }
    if (title, ref) in rules:
        return rules[(title, ref)]()
    over = {
        "Sessions/s by persona and era": ({f"{e}|{p}" for e in s["eras"] for p in s["personas"]}, False),
        "p50 / p95 / p99 per phase": (set(phases), False),
        "Errors/s by kind": (set(s["failures"]), not s["failures"]),
        "Findings/s": ({f["code"] for f in findings}, not findings),
        # A sum over every shard: one series without labels.
        "Sessions in flight": ({""}, False),
        # One series per shard (and metric); the server's only when it was watched.
        "Server resources": (None, not watched),
        "Generator resources": (None, False),
        "Soak slopes: server memory per session": (None, not watched),
    }
    if title in over:
        return ("over", over[title])
    raise KeyError(f"the panel {title!r} ({ref}) has no expectation here: add one")


def check(args):
    s = json.load(open(args.summary))
    dashboard = json.load(open(DASHBOARD))
    until = time.time()
    problems, checked = [], 0
    for panel in dashboard["panels"]:
        if panel["type"] == "row":
            continue
        for target in panel["targets"]:
            expr = target["expr"].replace("$run", args.run).replace("$__rate_interval", args.rate_interval)
            what = f"{panel['title']} {target['refId']}: {expr}"
            instant = target.get("instant", False)
            got = query(args.prometheus, expr, instant, args.since, until)
            kind, want = rule(panel["title"], target["refId"], s)
            checked += 1
            if kind == "exact":
                got1 = nonzero({k: v[0] for k, v in got.items()})
                if got1 != nonzero(want):
                    problems.append(f"{what}\n  Prometheus: {got1}\n  summary:    {nonzero(want)}")
            elif kind == "quantile":
                if set(got) != set(want):
                    problems.append(f"{what}\n  phases {sorted(got)} against {sorted(want)}")
                    continue
                q = float(expr.split("(", 2)[1].split(",")[0])
                for phase, w in want.items():
                    count, buckets = histogram(args.prometheus, args.run, phase, until)
                    ok = s["phases"][phase]["count"] - s["phases"][phase]["errors"]
                    if count != ok:
                        problems.append(f"{what}\n  {phase}: {count} samples in the histogram, {ok} in summary.json")
                        continue
                    lo, hi = rank_range(count, buckets, q) or (math.inf, -math.inf)
                    lo, hi = lo * (1 - EPSILON), hi * (1 + EPSILON)
                    g = got[phase][0]
                    if not (lo <= g <= hi and lo <= w <= hi):
                        problems.append(f"{what}\n  {phase}: {g} s (summary.json {w} s) outside [{lo}, {hi}]")
            else:
                keys, may_be_empty = want
                if not got and not may_be_empty:
                    problems.append(f"{what}\n  no series")
                for k, values in got.items():
                    if keys is not None and k not in keys:
                        problems.append(f"{what}\n  series {k!r} is not among {sorted(keys)}")
                    if not all(math.isfinite(v) for v in values):
                        problems.append(f"{what}\n  {k!r}: {values}")
    for p in problems:
        print(f"check_panels: {p}", file=sys.stderr)
    print(f"check_panels: {checked} panel queries, {len(problems)} problems (run {args.run})")
    return 1 if problems else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prometheus", required=True, help="e.g. http://127.0.0.1:9090")
    p.add_argument("--run", required=True, help="the run label (--run-label)")
    p.add_argument("--summary", required=True, help="the run's (or merge's) summary.json")
    p.add_argument("--since", type=float, default=time.time() - 3600, help="range queries start here (UNIX seconds)")
    p.add_argument("--rate-interval", default="5s", help="what $__rate_interval stands for")
    args = p.parse_args()
    try:
        sys.exit(check(args))
    except (OSError, KeyError, RuntimeError, ValueError) as e:
        print(f"check_panels: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
