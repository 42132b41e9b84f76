#!/usr/bin/env bash
# 100,000 concurrent long-lived sessions on this one box (issue 12 §4): the soak mix
# (profiles/soak-100k.toml: half WebSocket, half Streamable HTTP with the GET stream, so
# ~1.5 connections per session on each side) ramped up and held, split over GENS
# generator + server pairs, each generator against its own server process.
#
# Why pairs and not one port shared with `serve --reuse-port`: a Streamable HTTP session
# lives in the server process that answered its `initialize`, and the kernel spreads
# connections (not sessions) over the processes sharing a port, so a session's GET stream
# or next POST connection may reach a process that does not know it (404, then the
# client re-initializes). `--reuse-port` suits WebSocket or stateless serving.
#
# Why split: one process holds at most `ulimit -Hn` files (20,000 here, not raisable in
# this container), and one source address has ~28k ephemeral ports towards one server
# port. Each generator gets SESSIONS/GENS sessions and its own ADDRS_PER_GEN loopback
# source addresses (127.0.1.x, disjoint between generators).
#
#   benches/100k.sh                      # SESSIONS=100000 GENS=10 RAMP=150 HOLD=70
#   SESSIONS=4000 GENS=2 RAMP=8 HOLD=15 SAMPLE_AT=5 benches/100k.sh   # a small rehearsal
#
# RSS (VmRSS) of every generator and server is summed SAMPLE_AT seconds into the hold,
# with the established server connections (`ss`) and the load average; the sessions
# started and failed come from each generator's summary.json. Bounded: every process
# runs under a deadline and is killed on exit. Output: results/100k-<time>/ (each
# generator's results folder, its log, and row.txt: the line for results/BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

sessions=${SESSIONS:-100000}
gens=${GENS:-10}
ramp=${RAMP:-150}
hold=${HOLD:-70}
sample_at=${SAMPLE_AT:-30}
addrs_per_gen=${ADDRS_PER_GEN:-2}
per=$((sessions / gens))
nofile=$(ulimit -Hn)
ulimit -n "$nofile"
if ((per * 3 / 2 + 1000 > nofile)); then
  echo "$per sessions per generator need ~$((per * 3 / 2)) files, over the limit of $nofile" >&2
  echo "fix: raise GENS (e.g. GENS=$(((sessions * 3 / 2 + nofile - 2001) / (nofile - 2000))))" >&2
  exit 2
fi
if ((gens * addrs_per_gen > 250)); then
  echo "fix: GENS × ADDRS_PER_GEN must stay within 127.0.1.1-250" >&2
  exit 2
fi

build_fleet
out=results/100k-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
echo "results in $out; $(nproc) cores; load $(load_avg); $sessions sessions over $gens generator + server pairs" >&2

# Not pinned (benches/lib.sh's start_server pins to one core): all processes share both.
srv=() ports=()
for i in $(seq "$gens"); do
  port=$(free_port)
  "$bin" serve --http "127.0.0.1:$port" 2>"$out/server-$i.log" &
  srv+=("$!")
  pids+=("$!")
  ports+=("$port")
done
for p in "${ports[@]}"; do
  for _ in $(seq 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && break
    sleep 0.05
  done
done

load_start=$(load_avg)
started_at=$(date -u +%H:%M:%S)
gen=()
for i in $(seq "$gens"); do
  first=$(((i - 1) * addrs_per_gen + 1))
  last=$((first + addrs_per_gen - 1))
  timeout -k 5 $((ramp + hold + 120)) "$bin" run profiles/soak-100k.toml \
    --target "http://127.0.0.1:${ports[i - 1]}/mcp" \
    --ramp "$per:${ramp}s,$per:${hold}s" --source-addresses "127.0.1.$first-127.0.1.$last" \
    --out "$out/gen-$i" --quiet >/dev/null 2>"$out/gen-$i.log" &
  gen+=("$!")
  pids+=("$!")
done

sleep $((ramp + sample_at))
rss() { awk '/VmRSS/{print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
gen_kb=0 srv_kb=0
for g in "${gen[@]}"; do
  # timeout's child is mcp-fleet.
  gen_kb=$((gen_kb + $(rss "$(pgrep -P "$g")")))
done
for s in "${srv[@]}"; do srv_kb=$((srv_kb + $(rss "$s"))); done
conns=0
for p in "${ports[@]}"; do conns=$((conns + $(ss -Htn state established "( sport = :$p )" | wc -l))); done
load_hold=$(load_avg)
echo "in the hold: $conns server connections, generators $((gen_kb / 1024)) MiB, servers $((srv_kb / 1024)) MiB, load $load_hold" >&2

status=0
for g in "${gen[@]}"; do wait "$g" || status=1; done
python3 - "$out" "$sessions" "$gens" "$gens" "$conns" "$gen_kb" "$srv_kb" "$load_start" "$load_hold" "$started_at" "$hold" <<'EOF' | tee "$out/row.txt"
import json, pathlib, sys
out, n, gens, servers, conns, gen_kb, srv_kb, load0, load1, at, hold = sys.argv[1:]
n, gens, gen_kb, srv_kb = int(n), int(gens), int(gen_kb), int(srv_kb)
started = failed = 0
for i in range(1, gens + 1):
    s = json.loads((pathlib.Path(out) / f"gen-{i}" / "summary.json").read_text())
    started += s["sessions"]["started"]
    failed += s["sessions"]["failed"]
mib = lambda kb: f"{kb / 1024:,.1f} MiB"
print(f"| {n:,} | {gens} + {servers} | {int(conns):,} | {started:,} | {failed:,} | {hold} s | "
      f"{mib(gen_kb)} | {gen_kb / n:.1f} KiB | {mib(srv_kb)} | {srv_kb / n:.1f} KiB | "
      f"{load0} → {load1} | {at} |")
EOF
exit "$status"
