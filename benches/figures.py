"""Figures for benches/compare.sh: turn each tool's raw output into one JSON row, and the
rows into the markdown tables of results/BENCHMARKS.md.

  figures.py row KIND NAME OUTPUT-FILE key=value…   → one JSON line on stdout
  figures.py report ROWS.jsonl                     → markdown on stdout
"""
import json
import sys


def cpu(time_file):
    user, system, maxrss = open(time_file).read().split()[-3:]
    return float(user), float(system), int(maxrss)


def first_json(path):
    """The first JSON object in a file that may hold log lines around it."""
    text = open(path).read()
    return json.JSONDecoder().raw_decode(text[text.index("{"):])[0]


def pct(block):
    return {k: block[k] for k in ("p50_us", "p90_us", "p99_us", "p999_us", "max_us")}


def row(kind, name, path, extra):
    r = {"kind": kind, "name": name, **extra}
    if "time" in extra:
        r["user_s"], r["sys_s"], r["maxrss_kb"] = cpu(extra.pop("time"))
        r.pop("time")
    if "server_ticks" in extra:
        r["server_cpu_s"] = int(r.pop("server_ticks")) / int(r.pop("hz"))
    if kind == "memory":
        # One summary per generator process.
        ss = [json.load(open(f)) for f in path.split(",")]
        r["started"] = sum(s["sessions"]["started"] for s in ss)
        r["failed"] = sum(s["sessions"]["failed"] for s in ss)
    elif kind in ("fleet", "open"):
        s = json.load(open(path))
        p = s["phases"]
        r["duration_s"] = s["run"]["duration_s"]
        r["sessions"] = s["sessions"]["completed"] + s["sessions"]["failed"]
        r["started"] = s["sessions"]["started"]
        r["failed"] = s["sessions"]["failed"]
        r["rate_per_s"] = s["sessions"]["rate_per_s"]
        r["requests"] = sum(p[ph]["count"] for ph in ("initialize", "initialized", "close") if ph in p)
        r["session"] = pct(p["session"])
        r["response"] = pct(p["session"]["response"])
        r["planned_s"] = s["run"]["load"]["duration_s"]
        if "initialize" in p:
            r["initialize_response"] = pct(p["initialize"]["response"])
            r["connect_response"] = pct(p["connect"]["response"])
        if "lag" in p:
            r["lag"] = pct(p["lag"])
        r["dropped"] = s.get("counters", {}).get("dropped", 0)
    elif kind == "oha":
        o = first_json(path)
        ok = sum(o.get("statusCodeDistribution", {}).values())
        errors = sum(o.get("errorDistribution", {}).values())
        r["requests"] = ok + errors
        r["failed"] = errors + sum(
            n for code, n in o.get("statusCodeDistribution", {}).items() if not code.startswith("2")
        )
        r["duration_s"] = o["summary"]["total"]
        r["rate_per_s"] = r["requests"] / r["duration_s"]
    elif kind == "ts-sdk":
        o = first_json(path)
        r.update(sessions=o["sessions"] + o["failed"], failed=o["failed"], duration_s=o["duration_s"],
                 rate_per_s=o["sessions"] / o["duration_s"], requests=3 * o["sessions"],
                 session={"p50_us": o["session_p50_us"], "p99_us": o["session_p99_us"]},
                 first_error=o.get("first_error"))
    elif kind == "mcp-stress":
        o = first_json(path)
        by = {m["method"]: m for m in o["byMethod"]}
        n = by["initialize"]["count"]
        r.update(sessions=n, failed=o["totalErrors"], duration_s=o["durationMs"] / 1000,
                 rate_per_s=n / (o["durationMs"] / 1000), requests=o["totalRequests"],
                 session={"p50_us": int(by["initialize"]["p50"] * 1000),
                          "p99_us": int(by["initialize"]["p99"] * 1000)})
    return r


def us(x):
    return f"{x:,.1f} µs"


def ms(x):
    return f"{x / 1000:,.2f} ms"


def report(rows_path):
    rows = [json.loads(line) for line in open(rows_path)]
    by = {r["name"]: r for r in rows}
    out = []

    cost = [r for r in rows if r["name"].startswith("cost-fleet") or r["kind"] == "oha"]
    if cost:
        out += ["### CPU per HTTP request (generator core only)", "",
                "| tool | requests | failed | requests/s | generator CPU | CPU / request | server CPU / request | generator ÷ server | load |",
                "|---|---|---|---|---|---|---|---|---|"]
        for r in cost:
            c = r["user_s"] + r["sys_s"]
            per_s = r["requests"] / max(r["duration_s"], 1e-9)
            out.append(f"| {r['name']} | {r['requests']:,} | {r['failed']} | {per_s:,.0f} | "
                       f"{c:.2f} s (user {r['user_s']:.2f} + sys {r['sys_s']:.2f}) | {us(c / r['requests'] * 1e6)} | "
                       f"{us(r['server_cpu_s'] / r['requests'] * 1e6)} | {c / r['server_cpu_s']:.2f} | {r['load']} |")
        for name, mode in (("cost-fleet", "oha-no-keepalive"), ("cost-fleet-keepalive", "oha-keepalive"),
                           ("cost-fleet", "oha-keepalive")):
            fleet = by.get(name)
            if fleet and mode in by:
                f = (fleet["user_s"] + fleet["sys_s"]) / fleet["requests"]
                o = (by[mode]["user_s"] + by[mode]["sys_s"]) / by[mode]["requests"]
                out.append(f"\n{name} / {mode}: **{f / o:.2f}x** CPU per request")
        out.append("")

    churn = [r for r in rows if r["name"] in ("churn-fleet", "churn-fleet-keepalive", "ts-sdk", "mcp-stress")]
    if churn:
        out += ["### Handshake churn, sessions/s", "",
                "| tool | sessions | failed | sessions/s | generator CPU / session | server CPU / session | generator ÷ server | session p50 | session p99 | connections: opened / most open at once | load |",
                "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in churn:
            c = r["user_s"] + r["sys_s"]
            n = max(r["sessions"], 1)
            conns = (f"{int(r['conns_opened']):,} / {int(r['conns_open']):,}" if "conns_open" in r else "–")
            out.append(f"| {r['name']} | {r['sessions']:,} | {r['failed']} | {r['rate_per_s']:,.0f} | "
                       f"{us(c / n * 1e6)} | {us(r['server_cpu_s'] / n * 1e6)} | {c / r['server_cpu_s']:.2f} | {ms(r['session']['p50_us'])} | "
                       f"{ms(r['session']['p99_us'])} | {conns} | {r['load']} |")
        for name in ("churn-fleet", "churn-fleet-keepalive"):
            fleet = by.get(name)
            for other in ("ts-sdk", "mcp-stress"):
                if fleet and other in by and by[other]["rate_per_s"] > 0:
                    out.append(f"\n{name} / {other}: **{fleet['rate_per_s'] / by[other]['rate_per_s']:.1f}x** sessions/s")
        out.append("")

    opens = [r for r in rows if r["kind"] == "open"]
    if opens:
        out += ["### Open model", "",
                "| run | target/s | started | dropped | failed | started / planned s | error | started / measured s | "
                "session response p50 | p90 | p99 | p99.9 | max | initialize response p99 / max | connect response p99 / max | load |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in opens:
            target = float(r["target_rate"])
            achieved = r["started"] / r["planned_s"]
            q, i, c = r["response"], r["initialize_response"], r["connect_response"]
            out.append(f"| {r['name']} | {target:,.0f} | {r['started']:,} | {r['dropped']} | {r['failed']} | "
                       f"{achieved:,.1f} | {(achieved / target - 1) * 100:+.2f}% | {r['rate_per_s']:,.1f} | "
                       f"{ms(q['p50_us'])} | {ms(q['p90_us'])} | {ms(q['p99_us'])} | {ms(q['p999_us'])} | {ms(q['max_us'])} | "
                       f"{ms(i['p99_us'])} / {ms(i['max_us'])} | {ms(c['p99_us'])} / {ms(c['max_us'])} | {r['load']} |")
        out += ["", "Scheduler lag (actual − intended session start), and the CPU each side spent per "
                "started session (a rate is met when every arrival started, none was dropped and the "
                "lag p99 is under 5 ms):", "",
                "| run | p50 | p90 | p99 | p99.9 | max | generator CPU / session | server CPU / session | met |",
                "|---|---|---|---|---|---|---|---|---|"]
        for r in opens:
            q = r["lag"]
            n = max(r["started"], 1)
            gen = us((r["user_s"] + r["sys_s"]) / n * 1e6) if "user_s" in r else "–"
            srv = us(r["server_cpu_s"] / n * 1e6) if "server_cpu_s" in r else "–"
            planned = round(float(r["target_rate"]) * r["planned_s"])
            met = r["started"] >= planned and r["dropped"] == 0 and q["p99_us"] < 5000
            out.append(f"| {r['name']} | {ms(q['p50_us'])} | {ms(q['p90_us'])} | {ms(q['p99_us'])} | "
                       f"{ms(q['p999_us'])} | {ms(q['max_us'])} | {gen} | {srv} | {'yes' if met else 'no'} |")
        if "stall-baseline" in by and "stall-1s" in by:
            d = by["stall-1s"]["response"]["p99_us"] - by["stall-baseline"]["response"]["p99_us"]
            di = by["stall-1s"]["initialize_response"]["p99_us"] - by["stall-baseline"]["initialize_response"]["p99_us"]
            out.append(f"\nThe 1 s stall moved the session response-time p99 by **{ms(d)}** "
                       f"(initialize response-time p99 by {ms(di)}).")
        out.append("")

    mem = [r for r in rows if r["kind"] == "memory"]
    if mem:
        out += ["### Memory per concurrent long-lived session", "",
                "| sessions | processes | server connections | started | failed | generator RSS | RSS / session | server RSS | server RSS / session | load |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for r in mem:
            n = int(r["sessions"])
            g, s = int(r["gen_rss_kb"]), int(r["server_rss_kb"])
            out.append(f"| {n:,} | {r['processes']} | {r['server_conns']} | {r['started']:,} | {r['failed']} | {g / 1024:,.1f} MiB | {g * 1024 / n / 1024:,.1f} KiB | "
                       f"{s / 1024:,.1f} MiB | {s * 1024 / n / 1024:,.1f} KiB | {r['load']} |")
        if len(mem) > 1:
            a, b = mem[0], mem[-1]
            dn = int(b["sessions"]) - int(a["sessions"])
            out.append(f"\nMarginal, {int(a['sessions']):,} → {int(b['sessions']):,}: generator "
                       f"{(int(b['gen_rss_kb']) - int(a['gen_rss_kb'])) / dn:,.1f} KiB/session, server "
                       f"{(int(b['server_rss_kb']) - int(a['server_rss_kb'])) / dn:,.1f} KiB/session")
        out.append("")
    print("\n".join(out))


if __name__ == "__main__":
    if sys.argv[1] == "row":
        extra = dict(a.split("=", 1) for a in sys.argv[5:])
        print(json.dumps(row(sys.argv[2], sys.argv[3], sys.argv[4], extra)))
    else:
        report(sys.argv[2])
