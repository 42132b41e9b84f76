#!/usr/bin/env python3
"""The SDK matrix's rows, tables and page (benches/sdk-matrix.sh; Python 3, stdlib only).

  sdk_matrix.py row CELL-DIR key=value…        → one JSON line (a cell's figures) on stdout
  sdk_matrix.py line < ROW                      → that row in one terminal line
  sdk_matrix.py report ROWS.jsonl [--compare OTHER.jsonl] [--search-from OTHER.jsonl]
                [--notes FILE.md] --md FILE --html FILE
      --search-from: the ceiling and latency columns from other sittings' rows (a comma
      list, later ones over earlier; the text says which); --compare still compares ROWS'
      own ceilings with OTHER's
  sdk_matrix.py compare A.jsonl B.jsonl         → do two sittings order the cells alike?

A cell's folder holds one results folder per measure (conformance, held, ceiling,
latency, memory-N with memory-N.base, abandon); a measure that did not run is null in
the row, and the tables say "–".
"""

import csv
import html
import json
import math
import os
import statistics
import sys

# Two ceilings closer than this are a tie: their order is noise on a busy machine.
TIE = 0.15


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def ms(us):
    return None if us is None else round(us / 1000, 3)


def phase_figures(phases, name):
    p = phases.get(name)
    if not p or not p.get("count"):
        return None
    return {"count": p["count"], "errors": p["errors"], "p50_ms": ms(p["p50_us"]), "p99_ms": ms(p["p99_us"])}


def handshake_phase(phases):
    """The handshake of the era: initialize (2025), server/discover (2026-07-28)."""
    for name in ("initialize", "discover"):
        if phases.get(name, {}).get("count"):
            return name
    return None


def conformance(d):
    s = load(os.path.join(d, "conformance", "summary.json"))
    if not s:
        return None
    by = {"error": 0, "warning": 0}
    codes = []
    for f in s.get("findings", []):
        by[f["severity"]] = by.get(f["severity"], 0) + 1
        codes.append({"code": f["code"], "severity": f["severity"], "count": f["count"], "spec": f.get("spec")})
    sess = s["sessions"]
    return {**by, "codes": codes, "sessions": sess["started"], "failed": sess["failed"], "failures": s.get("failures", {})}


def held(d):
    """Calls/s on held sessions: the median of the whole seconds with calls, the first and
    last active ones left out (start-up and the end's cut)."""
    folder = os.path.join(d, "held")
    s = load(os.path.join(folder, "summary.json"))
    if not s:
        return None
    counts = []
    try:
        with open(os.path.join(folder, "intervals.csv")) as f:
            for r in csv.DictReader(f):
                if r["phase"] == "tools/call" and float(r["length_s"]) >= 0.99:
                    counts.append(int(r["count"]))
    except OSError:
        pass
    active = [c for c in counts if c > 0]
    if len(active) >= 3:
        active = active[1:-1]
    call = s["phases"].get("tools/call", {})
    return {
        "calls_per_s": statistics.median(active) if active else None,
        "seconds": len(active),
        "calls": call.get("count", 0),
        "errors": call.get("errors", 0),
        "sessions": s["run"]["load"].get("clients"),
        "failures": s.get("failures", {}),
    }


def ceiling(d):
    c = load(os.path.join(d, "ceiling", "ceiling.json"))
    if not c:
        return None
    a = c["answer"]
    steps = []
    for st in c["steps"]:
        ph = st.get("phases", {})
        hs = handshake_phase(ph)
        sess = ph.get("session", {})
        steps.append({
            "offered": st["offered_per_s"],
            "achieved": st["achieved_per_s"],
            "passed": st["passed"],
            "p50_ms": ms(sess.get("p50_us")),
            "p99_ms": ms(sess.get("p99_us")),
            "handshake": hs,
            "handshake_p99_ms": ms(ph.get(hs, {}).get("p99_us")) if hs else None,
            "server_cpu": (st.get("server") or {}).get("cpu_cores"),
            "generator_cpu": (st.get("generator") or {}).get("cpu_share_max"),
        })
    return {
        "per_s": a["ceiling_per_s"],
        "first_failing_per_s": a["first_failing_per_s"],
        "knee_per_s": a["knee_per_s"],
        "bound": a["bound"],
        "lower_bound": a["lower_bound"],
        "why": a["why"],
        "notes": a.get("notes", []),
        "complete": c.get("complete"),
        "slos": c["settings"]["slos"],
        "steps": steps,
    }


def latency(d):
    s = load(os.path.join(d, "latency", "summary.json"))
    if not s:
        return None
    ph = s["phases"]
    hs = handshake_phase(ph)
    load_ = s["run"]["load"]
    return {
        "model": load_.get("description"),
        "sessions_per_s": s["sessions"]["rate_per_s"],
        "failed": s["sessions"]["failed"],
        "handshake": hs,
        "phases": {k: phase_figures(ph, k) for k in ([hs] if hs else []) + ["tools/list", "tools/call"]},
    }


def series(s, name):
    return next((r["points"] for r in s.get("resources", []) if r["name"] == name), [])


def plateaus(d, n, pts):
    """The server's RSS on the two plateaus of a memory run (memory-N.stages: N/10 held
    until t1, N until t2, each held h seconds): the median of the samples of each hold."""
    try:
        n1, t1, n2, t2, h = (float(x) for x in open(os.path.join(d, f"memory-{n}.stages")).read().split())
    except (OSError, ValueError):
        return None
    def median_in(t_end):
        vs = [v for t, v in pts if t_end - h < t <= t_end + 0.5]
        return statistics.median(vs) if vs else None
    a, b = median_in(t1), median_in(t2)
    return ((int(n1), a), (int(n2), b)) if a is not None and b is not None and b > 0 else None


def memory(d):
    out = []
    for entry in sorted(os.listdir(d)):
        if not (entry.startswith("memory-") and entry.endswith(".base")):
            continue
        n = int(entry[len("memory-"):-len(".base")])
        s = load(os.path.join(d, f"memory-{n}", "summary.json"))
        try:
            base = int(open(os.path.join(d, entry)).read().strip() or 0)
        except (OSError, ValueError):
            base = 0
        if not s or not base:
            out.append({"sessions": n, "held": None, "per_session_kib": None})
            continue
        pts = series(s, "server.rss")
        peak = max((v for _, v in pts), default=None)
        sess = s["sessions"]
        # Sessions open at once (the fleet's in-flight gauge): a stack that refuses or
        # drops some holds fewer than N, and its clients start new ones, so neither N nor
        # started − failed is what it held.
        open_pts = series(s, "fleet.in_flight")
        held_n = max((v for _, v in open_pts), default=None) if open_pts else None
        if held_n is None:
            held_n = sess["started"] - sess["failed"]
        held_n = min(held_n, n)
        per = (peak - base) / held_n / 1024 if peak and held_n and held_n > 0 else None
        low = plateaus(d, n, pts)
        held_at = plateaus(d, n, open_pts) if open_pts else None
        if low:
            (n1, r1), (n2, r2) = low
            h1, h2 = (held_at[0][1], held_at[1][1]) if held_at else (n1, n2 - sess["failed"])
            held_n = int(h2)
            per = (r2 - r1) / (h2 - h1) / 1024 if h2 > h1 else None
        out.append({
            "sessions": n,
            "held": int(held_n) if held_n is not None else None,
            "failed": sess["failed"],
            "unreachable": sess.get("unreachable", 0),
            "base_mib": round(base / 2**20, 1),
            "peak_mib": round(peak / 2**20, 1) if peak else None,
            "plateaus_mib": [round(r / 2**20, 1) for _, r in low] if low else None,
            "per_session_kib": round(per, 2) if per is not None else None,
        })
    return out or None


def abandon(d):
    s = load(os.path.join(d, "abandon", "summary.json"))
    if not s:
        return None
    soak = s.get("soak", {})
    rss = next((x for x in soak.get("slopes", []) if x["series"] == "server.rss"), None)
    pts = series(s, "server.rss")
    res = {
        "sessions": s["sessions"]["started"],
        "failed": s["sessions"]["failed"],
        "rss_first_mib": round(pts[0][1] / 2**20, 1) if pts else None,
        "rss_last_mib": round(pts[-1][1] / 2**20, 1) if pts else None,
        "verdict": None,
        "per_abandoned_kib": None,
        "ci95_kib": None,
        "too_short": soak.get("too_short"),
    }
    if rss:
        res["verdict"] = rss.get("trend")
        per = next((p for p in rss.get("per", []) if p["per"] == "abandoned"), None)
        if per:
            res["per_abandoned_kib"] = round(per["value"] / 1024, 2)
            res["ci95_kib"] = [round(x / 1024, 2) for x in per["ci95"]]
    return res


def row(d, pairs):
    r = dict(p.split("=", 1) for p in pairs)
    r.update({
        "conformance": conformance(d),
        "held": held(d),
        "ceiling": ceiling(d),
        "latency": latency(d),
        "memory": memory(d),
        "abandon": abandon(d),
    })
    return r


# ---------------------------------------------------------------- text

def num(x, fmt="{:,.0f}"):
    return "–" if x is None else fmt.format(x)


def ceiling_text(r):
    c = r.get("ceiling")
    if r.get("kind") == "stdio":
        return "n/a (a process per session)"
    if not c:
        return "–"
    if c["per_s"] is None:
        return f"below {num(c['first_failing_per_s'])} ({c['bound'].replace('_', ' ')})"
    lb = "≥ " if c["lower_bound"] else ""
    return f"{lb}{num(c['per_s'])} ({c['bound'].replace('_', ' ')})"


def lat_text(r, phase):
    lat = r.get("latency")
    if not lat:
        return "–"
    name = lat["handshake"] if phase == "handshake" else phase
    p = lat["phases"].get(name) if name else None
    if not p:
        return "–"
    return f"{p['p50_ms']:.1f} / {p['p99_ms']:.1f}"


def mem_text(r, n):
    if r.get("mode") != "sessions":
        return "n/a"
    m = next((x for x in (r.get("memory") or []) if x["sessions"] == n), None)
    if not m:
        return "–"
    lost = (m.get("failed") or 0) + (m.get("unreachable") or 0)
    if lost > 0.01 * n:
        # The stack did not hold N: its clients kept reconnecting, so RSS per session
        # would divide by sessions it never held.
        return f"not held ({lost:,} of {n:,} failed or refused)"
    if m["per_session_kib"] is None:
        return "failed"
    return f"{m['per_session_kib']:.1f}"


def abandon_text(r):
    if r.get("mode") != "sessions":
        return "n/a"
    a = r.get("abandon")
    if not a:
        return "–"
    if a["verdict"] is None:
        return "too short" if a.get("too_short") else "–"
    per = "–" if a["per_abandoned_kib"] is None else f"{a['per_abandoned_kib']:+.1f}"
    return f"{per} ({a['verdict']})"


def findings_text(r):
    c = r.get("conformance")
    if not c:
        return "–"
    t = f"{c['error']} / {c['warning']}"
    if c["codes"]:
        t += ": " + ", ".join(f"`{x['code']}`" for x in c["codes"])
    if c["failed"]:
        t += f"; {c['failed']} of {c['sessions']} sessions failed"
    return t


def held_text(r):
    h = r.get("held")
    if not h or h["calls_per_s"] is None:
        return "–"
    return num(h["calls_per_s"])


def line(r):
    return (f"  {r['cell']}: ceiling {ceiling_text(r)}; held {held_text(r)} calls/s; "
            f"handshake p50/p99 {lat_text(r, 'handshake')} ms; mem/session 1k {mem_text(r, 1000)} KiB; "
            f"abandoned {abandon_text(r)}; findings E/W {findings_text(r)}; load {r.get('load_end')}; {r.get('seconds')} s")


def read_rows(path):
    with open(path) as f:
        return [json.loads(x) for x in f if x.strip()]


def order(rows):
    """Cells with a ceiling, highest first."""
    have = [r for r in rows if (r.get("ceiling") or {}).get("per_s")]
    return sorted(have, key=lambda r: -r["ceiling"]["per_s"])


def compare(a_rows, b_rows):
    """Whether two sittings order the cells alike by ceiling: the pairs they order
    differently, and of those, the ones apart by more than TIE in both (real). A lower
    bound (the generator gave out first) establishes no "below": a pair whose lower cell
    in a sitting is only a lower bound there is not a real disagreement."""
    a = {r["cell"]: r["ceiling"]["per_s"] for r in order(a_rows)}
    b = {r["cell"]: r["ceiling"]["per_s"] for r in order(b_rows)}
    low = {id(m): {r["cell"] for r in order(rows) if r["ceiling"].get("lower_bound")}
           for m, rows in ((a, a_rows), (b, b_rows))}
    common = sorted(set(a) & set(b), key=lambda c: -a[c])
    swapped, real = [], []
    for i, x in enumerate(common):
        for y in common[i + 1:]:
            if (a[x] - a[y]) * (b[x] - b[y]) < 0:
                pair = (x, y)
                swapped.append(pair)
                apart = lambda m: abs(m[x] - m[y]) / max(m[x], m[y]) > TIE
                below = lambda m: (x if m[x] < m[y] else y) not in low[id(m)]
                if apart(a) and apart(b) and below(a) and below(b):
                    real.append(pair)
    n = len(common)
    # The stacks, each by its highest cell (what a server author choosing an SDK reads).
    def best(rows):
        top = {}
        for r in order(rows):
            top.setdefault(r["stack"], r["ceiling"]["per_s"])
        return top
    sa, sb = best(a_rows), best(b_rows)
    both = [s for s in sa if s in sb]
    stacks_a = sorted(both, key=lambda s: -sa[s])
    stacks_b = sorted(both, key=lambda s: -sb[s])
    apart = lambda m, x, y: abs(m[x] - m[y]) / max(m[x], m[y]) > TIE
    stacks_real = [(x, y) for i, x in enumerate(stacks_a) for y in stacks_a[i + 1:]
                   if (sa[x] - sa[y]) * (sb[x] - sb[y]) < 0 and apart(sa, x, y) and apart(sb, x, y)]
    name = lambda rows: sorted({r.get("sitting", "?") for r in rows if r.get("ceiling")})
    return {
        "a_name": "`, `".join(name(a_rows)),
        "b_name": "`, `".join(name(b_rows)),
        "stacks_a": stacks_a,
        "stacks_same": stacks_a == stacks_b,
        "stacks_b": stacks_b,
        "stacks_real": stacks_real,
        "cells": common,
        "pairs": n * (n - 1) // 2,
        "swapped": swapped,
        "real": real,
        "agree": not real,
        "same_order": not swapped,
        "a": a,
        "b": b,
    }


def compare_text(cmp):
    out = [f"{len(cmp['cells'])} cells with a ceiling in both sittings, {cmp['pairs']} pairs."]
    if cmp["same_order"]:
        out.append("The order of the cells by ceiling is the same in both sittings.")
    else:
        out.append(f"{len(cmp['swapped'])} pairs in the other order; "
                   + ("none is apart by more than " if not cmp["real"] else f"{len(cmp['real'])} apart by more than ")
                   + f"{TIE:.0%} in both sittings"
                   + (" (ties within the noise): the order agrees." if cmp["agree"] else ": the order disagrees on "
                      + ", ".join(f"{x} vs {y}" for x, y in cmp["real"][:8])
                      + (f" and {len(cmp['real']) - 8} more pairs" if len(cmp["real"]) > 8 else "") + "."))
    if cmp.get("stacks_a"):
        if cmp["stacks_same"]:
            out.append("By stack (each by its highest cell) the order is the same in both sittings: "
                       + " > ".join(cmp["stacks_a"]) + ".")
        elif not cmp["stacks_real"]:
            out.append("By stack (each by its highest cell) the order agrees (swaps within "
                       f"{TIE:.0%}, ties): " + " > ".join(cmp["stacks_a"]) + ".")
        else:
            out.append("By stack (each by its highest cell) the order disagrees on "
                       + ", ".join(f"{x} vs {y}" for x, y in cmp["stacks_real"]) + ".")
    return " ".join(out)


def sittings_said(rows, q):
    """Which sittings (and commits) the rows come from: one, or each with its cells when
    a sitting's rows were joined by another's (cells added later, the same settings)."""
    groups = {}
    for r in rows:
        groups.setdefault((r.get("sitting", "?"), r.get("commit", "?")), []).append(r["cell"])
    if len(groups) == 1:
        (sitting, commit), = groups
        return f"Sitting {q}{sitting}{q}, commit {q}{commit}{q}"
    parts = [f"{q}{s}{q} at {q}{c}{q} ({len(cells)} cell{'' if len(cells) == 1 else 's'}"
             f"{'' if len(cells) > 3 else ': ' + ', '.join(cells)})"
             for (s, c), cells in groups.items()]
    return "Sittings " + "; ".join(parts)


def take_search(rows, other):
    """Each row's ceiling and latency from the other sitting's row of the same cell
    (marked with that sitting), where it has them; the rows without keep theirs."""
    by_cell = {r["cell"]: r for r in other}
    for r in rows:
        o = by_cell.get(r["cell"])
        for key in ("ceiling", "latency"):
            if o and o.get(key):
                r[key] = dict(o[key], sitting=o.get("sitting"), commit=o.get("commit"))
    return rows


def latency_source(rows):
    """Where the ceiling and latency columns come from, when not (all) from the rows'
    own sitting: each column's sittings, with the cells each gave."""
    out = []
    for key, what in (("ceiling", "ceiling"), ("latency", "latency")):
        taken = {}
        for r in rows:
            v = r.get(key)
            if v and v.get("sitting"):
                taken.setdefault((v["sitting"], v.get("commit")), []).append(r["cell"])
        if not taken:
            continue
        own = sum(1 for r in rows if r.get(key) and not r[key].get("sitting"))
        where = "; ".join(f"`{s}` at `{c}` ({len(cells)} cell{'' if len(cells) == 1 else 's'}"
                          f"{': ' + ', '.join(cells) if len(cells) <= 3 else ''})"
                          for (s, c), cells in sorted(taken.items()))
        out.append(f" The {what} column{'s' if key == 'latency' else ''} come{'' if key == 'latency' else 's'} "
                   f"from sitting {where}"
                   + (f", {own} cell{'' if own == 1 else 's'} from their own sitting" if own else "") + ".")
    return "".join(out)


def busy_cells(rows):
    """The cells whose ceiling search judged the machine busy with other work at a step
    (the generator's CPU-pressure rule), in row order."""
    return [r["cell"] for r in rows
            if any("busy with other work" in n for n in ((r.get("ceiling") or {}).get("notes") or []))]


def machine_said(rows):
    """What the sitting's machine was like, in words, by the searches' own judgement: a
    step whose generator (alone on its core) woke late while the machine's CPU pressure
    was high saw other work (`machine_busy`). The load average is shown, not judged: the
    sitting's own server (every thread of a JVM) and generator make up much of it."""
    loads = [float(r[k].split()[0]) for r in rows for k in ("load_start", "load_end") if r.get(k)]
    if not loads:
        return ""
    cores = (rows[0].get("cores") or "").split(" ")[0]
    busy = busy_cells(rows)
    span = (f"1-minute load average {min(loads):.2f} to {max(loads):.2f} on {cores or '?'} cores, "
            "the sitting's own server and generator included")
    if not busy:
        return f"No ceiling search saw other work on the machine during this sitting ({span})."
    listed = ", ".join(busy[:8]) + (" …" if len(busy) > 8 else "")
    return (f"**Other work shared the machine** at some step of the ceiling search of "
            f"{len(busy)} cell{'' if len(busy) == 1 else 's'} ({listed}; their notes say at which; {span}).")


def markdown(rows, cmp=None, notes=None):
    r0 = rows[0] if rows else {}
    loads = [float(r["load_end"].split()[0]) for r in rows if r.get("load_end")]
    out = [
        "# SDK matrix: MCP server SDKs measured the same way",
        "",
        "Generated by `benches/sdk_matrix.py` from `benches/sdk-matrix.sh`'s rows; the page with",
        "charts is [sdk-matrix.html](sdk-matrix.html). Every stack is a small server of ours with",
        "the same tools (interop/; [its interop table](../interop/README.md#interop-table)),",
        "the server pinned to one core and the generator (mcp-fleet) to the other.",
        "",
        sittings_said(rows, "`") + f", {r0.get('cores', '?')}; settings `{r0.get('settings', '?')}`.",
        "",
    ]
    said = machine_said(rows)
    if said:
        out += [said, ""]
    out += [
        "How each figure is measured:",
        "",
        "- **ceiling**: `mcp-fleet ceiling profiles/handshake.toml` (sessions that connect, "
        "initialize or `server/discover`, and close), open model, SLOs `p99(session) < 50ms` and "
        "`error_rate < 1%`, the server watched by `--server-pid`, a failing rate measured again "
        "(`--retries`, `RETRIES` in the settings) and passing if either try does; in brackets what bounds it "
        "([ceiling](../docs/ceiling.md#the-answer-and-what-bounds-it)). **≥** marks a lower bound: "
        "the generator's own core gave out first.",
        "- **held calls/s**: `echo` back to back on 4 held sessions (`benches/sdk-matrix/held.toml`), the median second.",
        "- **latency p50 / p99 (ms)**: sessions of handshake, `tools/list`, `tools/call` "
        "(`benches/sdk-matrix/latency.toml`) arriving at half the ceiling's request rate (a sixth of "
        "its sessions/s: a latency session makes three requests to a handshake session's one); stdio: one "
        "client's sessions back to back." + latency_source(rows),
        "- **KiB per held session**: sessions held idle (`benches/sdk-matrix/memory.toml`), the "
        "server's RSS growth from a plateau of N/10 sessions to one of N, per session added (what the "
        "first sessions cost once is left out); n/a where the server keeps no session.",
        "- **KiB per abandoned session**: the soak slope of server RSS per session that vanished "
        "without a DELETE (`benches/sdk-matrix/abandon.toml`) and the soak verdict "
        "([soak](../docs/soak.md#the-verdicts)): `leak` keeps them, `no trend` reclaims or never held them.",
        "- **findings E / W**: conformance findings of error / warning severity, `--strict --probe-undeclared`.",
        "",
        "| cell | stack | version | transport | era | ceiling sessions/s | held calls/s | handshake p50 / p99 | "
        "tools/list p50 / p99 | tools/call p50 / p99 | KiB per held session (1k) | KiB per abandoned session | "
        "findings E / W | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['cell']} | {r['stack']} | {r['version']} | {r['transport']}, {r['mode']} | {r['era']} | "
            f"{ceiling_text(r)} | {held_text(r)} | {lat_text(r, 'handshake')} | {lat_text(r, 'tools/list')} | "
            f"{lat_text(r, 'tools/call')} | {mem_text(r, 1000)} | {abandon_text(r)} | {findings_text(r)} | "
            f"{r.get('load_start')} → {r.get('load_end')} |")
    tenk = [r for r in rows if any(m["sessions"] == 10000 for m in (r.get("memory") or []))]
    if tenk:
        out += ["", "KiB per held session at 10,000 sessions (in flight: the fleet's sessions open or "
                "opening at once on the plateau; a stack that failed or refused more than 1 % did not hold them):", "",
                "| cell | in flight | failed / unreachable | KiB per session |", "|---|---|---|---|"]
        for r in tenk:
            m = next(m for m in r["memory"] if m["sessions"] == 10000)
            out.append(f"| {r['cell']} | {num(m['held'])} | {num(m.get('failed'))} / {num(m.get('unreachable'))} | "
                       f"{mem_text(r, 10000)} |")
    lows = [r for r in rows if (r.get("ceiling") or {}).get("lower_bound")]
    out += ["", "## What bounds each ceiling", ""]
    for r in rows:
        c = r.get("ceiling")
        if c:
            out.append(f"- **{r['cell']}**: {c['why']}")
    if lows:
        out += ["", f"{len(lows)} ceilings are lower bounds (the generator's core gave out first); their "
                "order among themselves says nothing about the servers."]
    if cmp:
        out += ["", "## A second sitting", "", compare_text(cmp), "",
                f"| cell | ceiling/s, sitting `{cmp.get('a_name', 'this')}` | ceiling/s, sitting `{cmp.get('b_name', 'the other')}` |",
                "|---|---|---|"]
        out += [f"| {c} | {cmp['a'][c]:,.0f} | {cmp['b'][c]:,.0f} |" for c in cmp["cells"]]
    if notes:
        out += ["", notes.strip()]
    out += ["", "## Reproducing a row", "",
            "Each row's command (from the repository root; the cell's own mcp-fleet commands are in "
            "its results folder's `commands.sh`):", ""]
    for r in rows:
        out.append(f"- {r['cell']} ({r.get('seconds', '?')} s): `{r.get('command', '?')}`")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- page (inline SVG)

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"]


def esc(s):
    return html.escape(str(s), quote=True)


def log_ticks(lo, hi):
    """Powers of ten between lo and hi; with 2 and 5 between them when fewer than three."""
    out = []
    for steps in ((1,), (1, 2, 5)):
        t, out = 10 ** math.floor(math.log10(lo)), []
        while t <= hi * 1.0001:
            out += [t * m for m in steps if lo / 1.0001 <= t * m <= hi * 1.0001]
            t *= 10
        if len(out) >= 3:
            break
    return out


def stack_colours(rows):
    stacks = []
    for r in rows:
        if r["stack"] not in stacks:
            stacks.append(r["stack"])
    return {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(stacks)}


def bar_chart(rows, colours):
    have = order(rows)
    if not have:
        return "<p>No ceilings in this sitting.</p>"
    below = [r for r in rows if r.get("ceiling") and r["ceiling"]["per_s"] is None]
    w, left, bar, gap, top = 860, 230, 16, 6, 24
    h = top + (len(have) + len(below)) * (bar + gap) + 30
    hi = max(r["ceiling"]["per_s"] for r in have) * 1.5
    lo = max(min(r["ceiling"]["per_s"] for r in have) / 2, 1)
    x = lambda v: left + (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * (w - left - 170)
    s = [f'<svg viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="ceilings">',
         '<defs><pattern id="lb" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
         '<rect width="3" height="6" fill="white" fill-opacity="0.55"/></pattern></defs>']
    for t in log_ticks(lo, hi):
        s.append(f'<line x1="{x(t):.1f}" y1="{top - 6}" x2="{x(t):.1f}" y2="{h - 24}" stroke="#ddd"/>'
                 f'<text x="{x(t):.1f}" y="{h - 8}" font-size="11" text-anchor="middle">{t:,.0f}/s</text>')
    for i, r in enumerate(have):
        c = r["ceiling"]
        y = top + i * (bar + gap)
        col = colours[r["stack"]]
        s.append(f'<text x="{left - 6}" y="{y + bar - 4}" font-size="12" text-anchor="end">{esc(r["cell"])}</text>')
        s.append(f'<rect x="{left}" y="{y}" width="{x(c["per_s"]) - left:.1f}" height="{bar}" fill="{col}">'
                 f'<title>{esc(r["stack"])} {esc(r["version"])}, {esc(r["transport"])} ({esc(r["mode"])}, '
                 f'{esc(r["era"])}): {c["per_s"]:,.0f} sessions/s, {esc(c["bound"])}</title></rect>')
        if c["lower_bound"]:
            s.append(f'<rect x="{left}" y="{y}" width="{x(c["per_s"]) - left:.1f}" height="{bar}" fill="url(#lb)"/>')
        label = ("≥ " if c["lower_bound"] else "") + f'{c["per_s"]:,.0f} ({c["bound"].replace("_", " ")})'
        s.append(f'<text x="{x(c["per_s"]) + 4:.1f}" y="{y + bar - 4}" font-size="11">{esc(label)}</text>')
    for i, r in enumerate(below, len(have)):
        y = top + i * (bar + gap)
        s.append(f'<text x="{left - 6}" y="{y + bar - 4}" font-size="12" text-anchor="end">{esc(r["cell"])}</text>'
                 f'<text x="{left + 4}" y="{y + bar - 4}" font-size="11" fill="#a00">no bar: the lowest step '
                 f'({r["ceiling"]["first_failing_per_s"]:,.0f}/s) failed its SLOs</text>')
    s.append("</svg>")
    return "\n".join(s)


def latency_chart(stack, rows, colours):
    """p50 (dashed) and p99 (solid) of the session against the achieved rate over one stack's
    ceiling steps, a line per cell."""
    cells = [r for r in rows if r["stack"] == stack and (r.get("ceiling") or {}).get("steps")]
    pts = [(st["achieved"], st[k]) for r in cells for st in r["ceiling"]["steps"] for k in ("p50_ms", "p99_ms")
           if st["achieved"] and st[k]]
    if not pts:
        return ""
    w, h, left, bottom, top, right = 420, 260, 56, 40, 24, 12
    xlo, xhi = min(p[0] for p in pts) / 1.3, max(p[0] for p in pts) * 1.3
    ylo, yhi = max(min(p[1] for p in pts) / 1.5, 0.01), max(max(p[1] for p in pts) * 1.5, 60)
    lx = lambda v: left + (math.log10(v) - math.log10(xlo)) / (math.log10(xhi) - math.log10(xlo)) * (w - left - right)
    ly = lambda v: h - bottom - (math.log10(v) - math.log10(ylo)) / (math.log10(yhi) - math.log10(ylo)) * (h - bottom - top)
    s = [f'<svg viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{esc(stack)}">',
         f'<text x="{left}" y="14" font-size="12" font-weight="bold">{esc(stack)}</text>']
    for t in log_ticks(xlo, xhi):
        s.append(f'<line x1="{lx(t):.1f}" y1="{top}" x2="{lx(t):.1f}" y2="{h - bottom}" stroke="#eee"/>'
                 f'<text x="{lx(t):.1f}" y="{h - bottom + 14}" font-size="10" text-anchor="middle">{t:,.0f}</text>')
    for t in log_ticks(ylo, yhi):
        s.append(f'<line x1="{left}" y1="{ly(t):.1f}" x2="{w - right}" y2="{ly(t):.1f}" stroke="#eee"/>'
                 f'<text x="{left - 4}" y="{ly(t) + 3:.1f}" font-size="10" text-anchor="end">{t:g} ms</text>')
    s.append(f'<line x1="{left}" y1="{ly(50):.1f}" x2="{w - right}" y2="{ly(50):.1f}" stroke="#999" stroke-dasharray="2 3">'
             '<title>the SLO: p99(session) &lt; 50 ms</title></line>')
    s.append(f'<text x="{w / 2:.0f}" y="{h - 6}" font-size="10" text-anchor="middle">achieved sessions/s '
             '(log); session p99 solid, p50 dashed</text>')
    for i, r in enumerate(cells):
        col = PALETTE[i % len(PALETTE)]
        steps = sorted((st for st in r["ceiling"]["steps"] if st["achieved"]), key=lambda st: st["achieved"])
        for k, dash in (("p99_ms", ""), ("p50_ms", ' stroke-dasharray="4 3"')):
            line_pts = " ".join(f"{lx(st['achieved']):.1f},{ly(st[k]):.1f}" for st in steps if st[k])
            if line_pts:
                s.append(f'<polyline points="{line_pts}" fill="none" stroke="{col}" stroke-width="1.5"{dash}>'
                         f'<title>{esc(r["cell"])} {k[:3]}</title></polyline>')
        for st in steps:
            if st["p99_ms"]:
                fill = col if st["passed"] else "white"
                s.append(f'<circle cx="{lx(st["achieved"]):.1f}" cy="{ly(st["p99_ms"]):.1f}" r="3" fill="{fill}" '
                         f'stroke="{col}"><title>{esc(r["cell"])}: offered {st["offered"]:,.4g}/s, achieved '
                         f'{st["achieved"]:,.4g}/s, p99 {st["p99_ms"]} ms, {"passed" if st["passed"] else "failed"}'
                         '</title></circle>')
        s.append(f'<text x="{w - right}" y="{top + 12 + i * 13}" font-size="10" text-anchor="end" fill="{col}">'
                 f'{esc(r["cell"])}</text>')
    s.append("</svg>")
    return "\n".join(s)


def html_table(head, body):
    t = ["<table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    for row_ in body:
        t.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row_) + "</tr>")
    t.append("</tbody></table>")
    return "\n".join(t)


def page(rows, cmp=None):
    colours = stack_colours(rows)
    r0 = rows[0] if rows else {}
    loads = [float(r["load_end"].split()[0]) for r in rows if r.get("load_end")]
    said = machine_said(rows)
    busy = f"<p class=warn>{esc(said).replace('**', '')}</p>" if said else ""
    stacks = list(colours)
    charts = "\n".join(c for c in (latency_chart(s, rows, colours) for s in stacks) if c)
    legend = " ".join(f'<span style="color:{c}">■</span> {esc(s)}' for s, c in colours.items())
    main = html_table(
        ["cell", "stack", "version", "transport", "era", "ceiling sessions/s", "held calls/s",
         "handshake p50 / p99 ms", "tools/list p50 / p99 ms", "tools/call p50 / p99 ms", "findings E / W", "load"],
        [[r["cell"], r["stack"], r["version"], f"{r['transport']}, {r['mode']}", r["era"], ceiling_text(r),
          held_text(r), lat_text(r, "handshake"), lat_text(r, "tools/list"), lat_text(r, "tools/call"),
          findings_text(r).replace("`", ""), f"{r.get('load_start')} → {r.get('load_end')}"] for r in rows])
    mem = html_table(
        ["cell", "stack", "transport", "KiB per held session (1k)", "KiB per held session (10k)",
         "KiB per abandoned session (verdict)", "RSS first → last over the abandon soak (MiB)"],
        [[r["cell"], r["stack"], f"{r['transport']}, {r['mode']}", mem_text(r, 1000), mem_text(r, 10000),
          abandon_text(r),
          (lambda a: f"{a['rss_first_mib']} → {a['rss_last_mib']}" if a and a.get("rss_first_mib") else "–")(
              r.get("abandon"))] for r in rows if r.get("mode") == "sessions"])
    repro = "\n".join(f"<li><code>{esc(r.get('command', ''))}</code></li>" for r in rows)
    second = f"<h2>A second sitting</h2><p>{esc(compare_text(cmp))}</p>" if cmp else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>MCP server SDKs, measured the same way</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }}
table {{ border-collapse: collapse; font-size: 13px; margin: 1em 0; }}
th, td {{ border: 1px solid #ccc; padding: 3px 6px; text-align: left; vertical-align: top; }}
th {{ background: #f4f4f4; }}
.warn {{ background: #fff4d6; padding: 0.5em; border-left: 4px solid #e0a800; }}
.charts {{ display: flex; flex-wrap: wrap; gap: 12px; }}
code {{ font-size: 12px; }}
</style></head><body>
<h1>MCP server SDKs, measured the same way</h1>
<p>{esc(sittings_said(rows, ''))},
{esc(r0.get('cores', '?'))}. Each stack is a small server with the same tools; mcp-fleet measures them
with the same method and durations (<code>{esc(r0.get('settings', ''))}</code>). The tables in words
and how each figure is measured: <a href="SDK-MATRIX.md">SDK-MATRIX.md</a>.</p>
{busy}
<h2>Handshake ceiling</h2>
<p>Sessions per second (log scale) at p99(session) &lt; 50 ms and &lt; 1 % errors, open model. Hatched
bars and ≥ are lower bounds: the generator's core gave out before the server. {legend}</p>
{bar_chart(rows, colours)}
<h2>Latency against throughput</h2>
<p>Each ceiling search's steps: the session's p99 (solid; hollow points failed a rule) and p50
(dashed) against the rate achieved, one chart per stack, a line per transport and era.</p>
<div class=charts>{charts}</div>
<h2>All figures</h2>
{main}
<h2>Memory</h2>
{mem}
{second}
<h2>Reproducing a row</h2>
<ol>{repro}</ol>
</body></html>
"""


def main(argv):
    if len(argv) >= 2 and argv[1] == "row":
        print(json.dumps(row(argv[2], argv[3:]), ensure_ascii=False))
    elif len(argv) >= 2 and argv[1] == "line":
        print(line(json.loads(sys.stdin.read())))
    elif len(argv) >= 3 and argv[1] == "report":
        args = argv[3:]
        opt = {args[i]: args[i + 1] for i in range(0, len(args) - 1, 2)}
        rows = read_rows(argv[2])
        # The comparison is of the rows' own ceilings, before any are taken from elsewhere.
        cmp = compare(rows, read_rows(opt["--compare"])) if "--compare" in opt else None
        # A comma list: each sitting's figures over the ones before (e.g. the ceilings of
        # one, then latency re-measured by a later PARTS=latency sitting).
        for other in filter(None, opt.get("--search-from", "").split(",")):
            rows = take_search(rows, read_rows(other))
        notes = open(opt["--notes"]).read() if "--notes" in opt else None
        if "--md" in opt:
            with open(opt["--md"], "w") as f:
                f.write(markdown(rows, cmp, notes))
        if "--html" in opt:
            with open(opt["--html"], "w") as f:
                f.write(page(rows, cmp))
        if "--md" not in opt and "--html" not in opt:
            sys.stdout.write(markdown(rows, cmp, notes))
    elif len(argv) == 4 and argv[1] == "compare":
        cmp = compare(read_rows(argv[2]), read_rows(argv[3]))
        print(compare_text(cmp))
        for c in cmp["cells"]:
            print(f"  {c}: {cmp['a'][c]:,.0f}/s and {cmp['b'][c]:,.0f}/s")
        return 0 if cmp["agree"] else 1
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
