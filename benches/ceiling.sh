#!/usr/bin/env bash
# `mcp-fleet ceiling` against servers whose capacity is known (issue 35): the reference
# server's capacity knob, `serve --workers N --service-time 20ms` (N / 20 ms handshakes a
# second, whatever the CPU), at 100/s, 1,000/s and 5,000/s; then the built-in server
# with no knob, whose bound is its CPU or the generator's. Server and generator are
# pinned to a core each (SERVER_CORE, GEN_CORE); sessions are handshakes only
# (profiles/handshake.toml) over pooled connections (--keep-alive), so the generator's
# cost per session stays small beside what is measured.
#
#   benches/ceiling.sh                         # CAPACITIES="100 1000 5000" STEP=10s
#   CAPACITIES=100 STEP=3s WARMUP=1s benches/ceiling.sh   # a quick rehearsal
#   BUILTIN=0 benches/ceiling.sh               # the knob only
#   CAPACITIES= BUILTIN=0 THIRD_PARTY=1 benches/ceiling.sh   # Python mcp 1.30 and rmcp only
#
# Output: results/ceiling-bench-<time>/ (one ceiling folder per search, its log) and
# rows.txt: one line per search — known capacity, ceiling found, its error, first
# failing rate, knee, bound, steps, minutes, and the server's and generator's CPU per
# session at the highest passing step.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

capacities=${CAPACITIES:-100 1000 5000}
step=${STEP:-10s}
warmup=${WARMUP:-2s}
slo=${SLO:-p99(initialize) < 50ms}
service_ms=20
builtin=${BUILTIN:-1}
third_party=${THIRD_PARTY:-0}

build_fleet
out=results/ceiling-bench-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
echo "commit $(git rev-parse --short HEAD), load $(load_avg), step $step, warm-up $warmup, SLO '$slo'" | tee "$out/rows.txt"

# row NAME KNOWN DIR SECONDS: one line of rows.txt from DIR/ceiling.json.
row() {
  python3 - "$1" "$2" "$3" "$4" <<'PY' | tee -a "$out/rows.txt"
import json, sys
name, known, folder, secs = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4])
f = json.load(open(folder + "/ceiling.json"))
a = f["answer"]
c = a["ceiling_per_s"]
best = next((s for s in f["steps"] if s["offered_per_s"] == c), None)
def per_session(s):
    if not s or not s["server"]["cpu_cores"] or not s["achieved_per_s"]:
        return "–"
    return "%.1f µs" % (s["server"]["cpu_cores"] / s["achieved_per_s"] * 1e6)
gen = best["generator"]["cpu_share_max"] if best else None
err = "–" if not known or c is None else "%+.1f %%" % ((c - known) / known * 100)
print(f"| {name} | {known:,.0f} | {c} | {err} | {a['first_failing_per_s']} | {a['knee_per_s']} | "
      f"{a['bound'].replace('_', ' ')}{' (lower bound)' if a['lower_bound'] else ''} | {len(f['steps'])} | "
      f"{secs / 60:.1f} | {per_session(best)} | {'–' if gen is None else '%.0f %%' % (gen * 100)} |")
PY
}

# search NAME KNOWN FROM TO: one ceiling search against the server started last.
search() {
  local name=$1 known=$2 from=$3 to=$4 t0 t1
  t0=$(date +%s)
  timeout -k 5 900 taskset -c "$gen_core" "$bin" ceiling profiles/handshake.toml \
    --target "$url" --server-pid "$server_pid" --keep-alive --max-in-flight 20000 \
    --from "$from/s" --to "$to/s" --step "$step" --step-warmup "$warmup" \
    --slo "$slo" --color never --out "$out/$name" >"$out/$name.log" 2>&1 || true
  t1=$(date +%s)
  row "$name" "$known" "$out/$name" "$((t1 - t0))"
}

echo "| server | known/s | ceiling/s | error | first failing/s | knee/s | bound | steps | minutes | server CPU per session | generator CPU (max share) |" | tee -a "$out/rows.txt"
echo "|---|---|---|---|---|---|---|---|---|---|---|" | tee -a "$out/rows.txt"
for c in $capacities; do
  workers=$((c * service_ms / 1000))
  start_server --workers "$workers" --service-time "${service_ms}ms"
  search "knob-$c" "$c" "$((c / 10))" "$((c * 4))"
  stop_server
done
if [[ $builtin == 1 ]]; then
  start_server
  search builtin 0 500 64000
  stop_server
fi
if [[ $third_party == 1 ]]; then
  # Two SDK servers of interop/, side by side in one sitting: Python (stateful Streamable
  # HTTP) and Rust (rmcp, stateful).
  mcp_venv target/interop/venv 1.30.0
  [[ -x $target_dir/release/rmcp-peer ]] || cargo build --release --quiet -p rmcp-peer
  start_command "$out/py1.server.log" target/interop/venv/bin/python interop/python_server.py streamable-http PORT
  search python-mcp-1.30 0 20 4000
  stop_server
  start_command "$out/rmcp.server.log" "$target_dir/release/rmcp-peer" --http 127.0.0.1:PORT
  search rmcp-3.11 0 200 64000
  stop_server
fi
echo "results: $out"
