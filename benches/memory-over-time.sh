#!/usr/bin/env bash
# The generator's memory over time, measured from outside: does a long run keep a flat
# RSS? The reference server runs as its own process (`mcp-fleet serve --http
# 127.0.0.1:0`, its port read from its start-up line), so only the generator's own
# memory is in the generator's figure; both are sampled from /proc/PID/status (VmRSS)
# and /proc/PID/fd every SAMPLE_EVERY seconds into samples.csv.
#
#   churn       SESSIONS sessions (default 200000) by CLIENTS closed-model clients
#               (default 32) of PROFILE (default profiles/handshake.toml): every
#               session connects, runs its scenario once and closes.
#   long-lived  CLIENTS sessions (default 2000) held open for DURATION (default 10m),
#               each calling a tool once per second (a profile written next to the
#               results: shape = "long-lived", pace = "1/s").
#
#   benches/memory-over-time.sh churn|long-lived
#   SESSIONS=2000000 CLIENTS=32 PROFILE=profiles/handshake.toml DURATION=10m
#   SAMPLE_EVERY=1 WARMUP_PCT=10 SERVER_CORE=1 GEN_CORE=0 (empty = not pinned)
#
# At the end it prints (and writes to report.md) RSS at the start, 10 %, 50 % and 100 %
# of the generator's lifetime, the maximum, and the least-squares slope of RSS over the
# samples after the first WARMUP_PCT % of the run: MiB/h, and for churn MiB per million
# sessions (at the run's mean session rate), with R². Loopback only; every process
# started here is stopped on exit. Output: results/memory-<mode>-<time>/.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-churn}
case $mode in churn | long-lived) ;; *)
  echo "usage: $0 churn|long-lived (got '$mode')" >&2
  exit 2
  ;;
esac
sessions=${SESSIONS:-200000}
profile=${PROFILE:-profiles/handshake.toml}
duration=${DURATION:-10m}
every=${SAMPLE_EVERY:-1}
warmup=${WARMUP_PCT:-10}
if [[ $mode == churn ]]; then clients=${CLIENTS:-32}; else clients=${CLIENTS:-2000}; fi

# bin, pids and the cleanup on exit are the other benchmarks' (benches/lib.sh).
source benches/lib.sh
# Here an empty SERVER_CORE / GEN_CORE means "not pinned" (lib.sh's :- would pin).
server_core=${SERVER_CORE-1}
gen_core=${GEN_CORE-0}
build_fleet
out=results/memory-$mode-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"

pinned() { # pinned CORE CMD…: CMD on CORE, or unpinned when CORE is empty.
  local core=$1
  shift
  if [[ -n $core ]]; then exec taskset -c "$core" "$@"; else exec "$@"; fi
}

# The server, on a port the OS picks; its start-up line names the URL.
(pinned "$server_core" "$bin" serve --http 127.0.0.1:0) 2>"$out/server.log" &
server=$!
pids+=("$server")
url=
for _ in $(seq 200); do
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$out/server.log" | head -1 || true)
  [[ -n $url ]] && break
  sleep 0.05
done
[[ -n $url ]] || { echo "the server did not print its URL:" >&2; cat "$out/server.log" >&2; exit 1; }

if [[ $mode == churn ]]; then
  run_args=("$profile" --target "$url" --clients "$clients" --sessions "$sessions" --duration 24h)
else
  cat >"$out/long-lived.toml" <<'TOML'
# Long-lived sessions for benches/memory-over-time.sh: each session stays open and calls
# a tool once per second until the run ends.
name = "memory-long-lived"

[target]
timeout = "30s"

[load]
grace = "10s"

[[persona]]
name = "long-lived"
transport = "http"
shape = "long-lived"
pace = "1/s"
client_info = { name = "memory-bench", version = "1.0.0" }

[[scenario]]
name = "call"
steps = [{ op = "tools/call", tool = "echo", arguments = { message = "still here" } }]
TOML
  run_args=("$out/long-lived.toml" --target "$url" --clients "$clients" --duration "$duration")
fi

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "$mode: $bin run ${run_args[*]} (server $url); $(nproc) cores; load $load_before" >&2
started=$EPOCHREALTIME
(pinned "$gen_core" "$bin" run "${run_args[@]}" --out "$out/run" --quiet) \
  >"$out/run.log" 2>&1 &
gen=$!
pids+=("$gen")

# rss_kib PID / fds PID: 0 once the process is gone.
rss_kib() { awk '/^VmRSS/{print $2; f=1} END{if(!f) print 0}' "/proc/$1/status" 2>/dev/null || echo 0; }
fds() { local f=(/proc/"$1"/fd/*); [[ -e ${f[0]} ]] && echo "${#f[@]}" || echo 0; }

echo "t_s,generator_rss_kib,generator_fds,server_rss_kib,server_fds" >"$out/samples.csv"
next=$started
while kill -0 "$gen" 2>/dev/null; do
  g_rss=$(rss_kib "$gen")
  [[ $g_rss == 0 ]] && break
  t=$(awk -v a="$EPOCHREALTIME" -v b="$started" 'BEGIN{printf "%.2f", a-b}')
  echo "$t,$g_rss,$(fds "$gen"),$(rss_kib "$server"),$(fds "$server")" >>"$out/samples.csv"
  next=$(awk -v n="$next" -v e="$every" 'BEGIN{printf "%.6f", n+e}')
  pause=$(awk -v n="$next" -v now="$EPOCHREALTIME" 'BEGIN{d=n-now; printf "%.3f", (d > 0 ? d : 0)}')
  sleep "$pause"
done
status=0
wait "$gen" || status=$?
echo "generator exited with $status ($(wc -l <"$out/samples.csv") samples); load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$out" "$mode" "$warmup" "$load_before" "$status" <<'PY' | tee "$out/report.md"
import csv, json, sys
out, mode, warmup, load, status = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(open(f"{out}/samples.csv"))]
if len(rows) < 4:
    sys.exit(f"only {len(rows)} samples in {out}/samples.csv: the run was too short to say")
try:
    s = json.load(open(f"{out}/run/summary.json"))
except (OSError, ValueError) as e:
    sys.exit(f"no summary from the run ({e}); see {out}/run.log")
sess = s["sessions"]
started, completed, failed = sess["started"], sess["completed"], sess["failed"]
secs = s["run"]["duration_s"]
end = rows[-1]["t_s"]

def at(frac):
    """The first sample at or after frac of the sampled lifetime."""
    t = frac * end
    return next(r for r in rows if r["t_s"] >= t)

def fit(col):
    """Least squares of col (KiB) over t (s) after the warm-up: slope KiB/s and R²."""
    pts = [(r["t_s"], r[col]) for r in rows if r["t_s"] >= end * warmup / 100]
    n = len(pts)
    mx = sum(x for x, _ in pts) / n
    my = sum(y for _, y in pts) / n
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    syy = sum((y - my) ** 2 for _, y in pts)
    b = sxy / sxx if sxx else 0.0
    r2 = (sxy * sxy) / (sxx * syy) if sxx and syy else 0.0
    return b, r2, n

mib = lambda kib: kib / 1024
rate = started / secs if secs else 0.0
print(f"## {mode}: {started:,} sessions started, {completed:,} completed, {failed:,} failed "
      f"in {secs:.0f} s ({rate:,.0f} sessions/s); generator exit {status}; load at start {load}")
print()
print("| process | start | 10 % | 50 % | 100 % | max | slope after warm-up | R² |")
print("|---|---|---|---|---|---|---|---|")
for who in ("generator", "server"):
    col = f"{who}_rss_kib"
    b, r2, n = fit(col)
    per_h = mib(b) * 3600
    slope = f"{per_h:+.2f} MiB/h"
    if mode == "churn" and rate:
        slope += f" = {mib(b) / rate * 1e6:+.2f} MiB per million sessions"
    cells = [f"{mib(at(f)[col]):.1f} MiB" for f in (0, 0.1, 0.5, 1.0)]
    peak = max(r[col] for r in rows)
    print(f"| {who} | {' | '.join(cells)} | {mib(peak):.1f} MiB | {slope} | {r2:.2f} |")
fd = lambda who: f"{int(rows[0][who + '_fds'])} → {int(max(r[who + '_fds'] for r in rows))} (max)"
print()
print(f"open files: generator {fd('generator')}, server {fd('server')}; "
      f"{len(rows)} samples, slope over those after the first {warmup:.0f} % ({end * warmup / 100:.0f} s)")
PY
