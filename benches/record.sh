#!/usr/bin/env bash
# What the recording proxy adds per request: the same open-model load (RATE sessions/s
# for DURATION, every session the default discovery: initialize, the lists, a call,
# close) against one `serve --http`, directly and through `mcp-fleet record`, on each
# HTTP transport, in the order ORDER (default `direct proxied proxied direct`: drift in
# the machine's load falls on both). The server and the proxy share SERVER_CORE (the
# proxy is part of the path to the server), the generator has GEN_CORE. Loopback only;
# every process is killed on exit.
#
#   benches/record.sh              RATE=100/s DURATION=10s TRANSPORTS="http sse ws"
#
# Prints a Markdown table per transport and phase: p50 and p99 direct and proxied (the
# mean of the runs of each), and the proxy's CPU per request; raw results in
# results/record-<time>/. Figures: results/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh
build_fleet
rate=${RATE:-100/s}
duration=${DURATION:-10s}
order=${ORDER:-direct proxied proxied direct}
transports=${TRANSPORTS:-http sse ws}
out=results/record-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
start_server
"$bin" --version >"$out/version.txt"
taskset -c "$server_core" "$bin" record --listen 127.0.0.1:0 --upstream "$url" \
  --trace "$out/trace.jsonl" 2>"$out/record.log" &
proxy_pid=$!
pids+=("$proxy_pid")
via=""
for _ in $(seq 100); do
  via=$(grep -o 'listening on [0-9.:]*' "$out/record.log" | cut -d' ' -f3 || true)
  [[ -n $via ]] && break
  sleep 0.05
done
[[ -n $via ]] || { echo "record did not start: $(cat "$out/record.log")" >&2; exit 1; }
i=0
for transport in $transports; do
  case $transport in
    http) path=/mcp; scheme=http; extra=() ;;
    sse) path=/sse; scheme=http; extra=(--transport sse) ;;
    ws) path=/ws; scheme=ws; extra=() ;;
    *) echo "unknown transport $transport (http, sse, ws)" >&2; exit 2 ;;
  esac
  for variant in $order; do
    i=$((i + 1))
    case $variant in
      direct) host=127.0.0.1:$port ;;
      proxied) host=$via ;;
      *) echo "unknown variant $variant (direct, proxied)" >&2; exit 2 ;;
    esac
    dir=$out/$i-$transport-$variant
    before=$(cpu_ticks "$proxy_pid")
    timed "$dir.time" "$bin" run --target "$scheme://$host$path" "${extra[@]}" --rate "$rate" \
      --duration "$duration" --seed 1 --quiet --out "$dir" >/dev/null
    after=$(cpu_ticks "$proxy_pid")
    echo "$((after - before))" >"$dir.proxy-ticks"
  done
done
python3 - "$out" "$hz" <<'PY'
import glob, json, os, sys
out, hz = sys.argv[1], int(sys.argv[2])
rows = {}
for d in sorted(glob.glob(f"{out}/*-*-*/")):
    _, transport, variant = os.path.basename(d.rstrip("/")).split("-")
    s = json.load(open(d + "summary.json"))
    ticks = int(open(d.rstrip("/") + ".proxy-ticks").read())
    requests = sum(p["count"] for n, p in s["phases"].items() if n not in ("lag", "connect"))
    for phase in ("initialize", "tools/list", "tools/call", "close"):
        p = s["phases"].get(phase)
        if not p or not p["count"]:
            continue
        r = rows.setdefault((transport, phase), {"direct": [], "proxied": [], "cpu": []})
        r[variant].append((p["p50_us"], p["p99_us"]))
        if variant == "proxied" and phase == "initialize":
            r["cpu"].append(ticks / hz * 1e6 / max(requests, 1))
def mean(xs, i):
    return sum(x[i] for x in xs) / len(xs) if xs else float("nan")
print("| transport | phase | p50 direct | p50 proxied | Δp50 | p99 direct | p99 proxied | Δp99 | proxy CPU per request |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for (transport, phase), r in sorted(rows.items()):
    d50, p50 = mean(r["direct"], 0), mean(r["proxied"], 0)
    d99, p99 = mean(r["direct"], 1), mean(r["proxied"], 1)
    cpu = f"{sum(r['cpu']) / len(r['cpu']):.0f} µs" if r["cpu"] else ""
    print(f"| {transport} | {phase} | {d50:.0f} µs | {p50:.0f} µs | {p50 - d50:+.0f} µs | {d99:.0f} µs | {p99:.0f} µs | {p99 - d99:+.0f} µs | {cpu} |")
PY
echo "raw: $out"
