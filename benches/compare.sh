#!/usr/bin/env bash
# Side-by-side benchmarks of mcp-fleet against other load generators, all against the
# built-in reference server (`mcp-fleet serve --http`), in one invocation:
#
#   cost    CPU per HTTP request: mcp-fleet handshake sessions (initialize, initialized,
#           DELETE: 3 requests each) vs oha POSTing the same `initialize`, with and
#           without keep-alive.
#   churn   handshake sessions/s: mcp-fleet (a connection per session, and pooled with
#           --keep-alive) vs the official TypeScript SDK client (benches/ts-sdk-churn.mjs)
#           vs mcp-stress `connection-churn`, with the connections each opened (ss).
#   open    open model at RATE sessions/s: achieved arrival rate, scheduler lag
#           percentiles, response time from the intended start.
#   ceiling open model with --keep-alive at each of CEILING_RATES sessions/s: which rates
#           are met (all started, none dropped, scheduler lag p99 under 5 ms), and the
#           generator's and the server's CPU per session at each.
#   stall   open model at STALL_RATE against a server that stalls 1 s (--stall-at
#           --stall-for) vs the same run against a healthy server: p99 response time.
#   memory  generator and server memory per concurrent long-lived session
#           (MEM_PROFILE, default profiles/soak-20k.toml) at MEM_SIZES sessions.
#
# The server is pinned to core SERVER_CORE (1), the generator to GEN_CORE (0); each tool
# gets a fresh server. CPU is user + system from /usr/bin/time (generator) and /proc
# (server). Every load is bounded in time, every process is killed on exit. The load
# average is recorded beside each figure: the machine may be shared.
#
#   benches/compare.sh [SECTION…]            (default: cost churn open stall memory)
#   DURATION=10s CLIENTS=32 RATE=4000 STALL_RATE=2000 MEM_SIZES="1000 10000 20000"
#   CEILING_RATES="8000 10000 12000 14000 16000 20000"
#   MEM_PROFILE=profiles/soak-20k.toml FLEET_BIN=(this tree's dist build)
#
# Output: results/bench-<time>/ with every tool's raw output and report.md (the tables,
# made by benches/figures.py). Helpers (build, installs, pinning, cleanup): benches/lib.sh.
# Figures and what they mean: results/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

duration=${DURATION:-10s}
secs=${duration%s}
[[ $secs =~ ^[0-9]+$ ]] || { echo "DURATION must be whole seconds, e.g. 10s" >&2; exit 2; }
clients=${CLIENTS:-32}
rate=${RATE:-4000}
stall_rate=${STALL_RATE:-2000}
mem_sizes=${MEM_SIZES:-1000 10000 20000}
ceiling_rates=${CEILING_RATES:-8000 10000 12000 14000 16000 20000}
mem_profile=${MEM_PROFILE:-profiles/soak-20k.toml}
sections=${*:-cost churn open stall memory}
out=results/bench-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
rows=$out/rows.jsonl

build_fleet
node_deps
echo "results in $out; $(nproc) cores; load $(load_avg)" >&2

# row KIND TOOL JSON-FILE-OR-STRING key=value…: one measured figure, as a JSON line.
row() {
  python3 benches/figures.py row "$@" >>"$rows"
}

init_body='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"oha","version":"1.16.0"}}}'

# conns_watch / conns_done: the connections a tool made to the server during a run.
# Opened: the kernel's count of accepted TCP connections (PassiveOpens in /proc/net/snmp;
# host-wide, so anything else accepting connections meanwhile adds to it); most open at
# once: the established connections to the server's port, sampled once a second (ss).
# conns_done sets $conns to key=value words for `row`.
passive_opens() { awk '/^Tcp:/ && $6 ~ /^[0-9]+$/ { print $6 }' /proc/net/snmp; }
conns_watch() {
  local file=$out/conns-$port
  conns_opened_before=$(passive_opens)
  (
    max=0
    trap 'echo "$max" >"$file"; exit 0' TERM
    while :; do
      c=$(ss -Htn state established "( dport = :$port )" | wc -l)
      ((c > max)) && max=$c
      sleep 1
    done
  ) &
  conns_pid=$!
  pids+=("$conns_pid")
}
conns_done() {
  local opened=$(($(passive_opens) - conns_opened_before))
  kill "$conns_pid" 2>/dev/null || true
  wait "$conns_pid" 2>/dev/null || true
  conns="conns_open=$(cat "$out/conns-$port" 2>/dev/null || echo 0) conns_opened=$opened"
}

# fleet_closed NAME [FLAGS...]: mcp-fleet handshake churn against a fresh server.
# With WATCH_CONNS=1 the server's connections are counted too (conns_watch).
fleet_closed() {
  local name=$1 load conns=""
  shift
  start_server
  local before; before=$(cpu_ticks "$server_pid")
  load=$(load_avg)
  [[ ${WATCH_CONNS:-0} == 1 ]] && conns_watch
  timed "$out/$name.time" "$bin" run profiles/handshake.toml --target "$url" \
    --clients "$clients" --duration "$duration" --out "$out/$name" --quiet "$@" >/dev/null
  [[ ${WATCH_CONNS:-0} == 1 ]] && conns_done
  # shellcheck disable=SC2086 # conns is key=value words
  row fleet "$name" "$out/$name/summary.json" time="$out/$name.time" \
    server_ticks=$(($(cpu_ticks "$server_pid") - before)) hz="$hz" load="$load" $conns
  stop_server
}

section_cost() {
  echo "== cost: CPU per HTTP request" >&2
  local oha mode
  oha=$(oha_bin)
  fleet_closed cost-fleet
  # Sessions on shared keep-alive connections, as the TypeScript SDK on Node's fetch runs.
  fleet_closed cost-fleet-keepalive --keep-alive
  for mode in keepalive no-keepalive; do
    local flags=() load before
    [[ $mode == no-keepalive ]] && flags=(--disable-keepalive)
    start_server
    before=$(cpu_ticks "$server_pid")
    load=$(load_avg)
    timed "$out/cost-oha-$mode.time" "$oha" -z "$duration" -c "$clients" --no-tui \
      --output-format json "${flags[@]}" -m POST \
      -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
      -d "$init_body" "$url" >"$out/cost-oha-$mode.json"
    row oha "oha-$mode" "$out/cost-oha-$mode.json" time="$out/cost-oha-$mode.time" \
      server_ticks=$(($(cpu_ticks "$server_pid") - before)) hz="$hz" load="$load"
    stop_server
  done
}

section_churn() {
  echo "== churn: handshake sessions/s" >&2
  WATCH_CONNS=1 fleet_closed churn-fleet
  # Like for like with a client that keeps its connections: sessions on pooled ones.
  WATCH_CONNS=1 fleet_closed churn-fleet-keepalive --keep-alive
  local load before
  start_server
  before=$(cpu_ticks "$server_pid")
  load=$(load_avg)
  timed "$out/churn-ts-sdk.time" node benches/ts-sdk-churn.mjs "$url" "$clients" "$secs" \
    >"$out/churn-ts-sdk.json"
  row ts-sdk ts-sdk "$out/churn-ts-sdk.json" time="$out/churn-ts-sdk.time" \
    server_ticks=$(($(cpu_ticks "$server_pid") - before)) hz="$hz" load="$load"
  stop_server

  start_server
  before=$(cpu_ticks "$server_pid")
  load=$(load_avg)
  conns_watch
  timed "$out/churn-mcp-stress.time" "$mcp_stress" run -p connection-churn -d "$secs" \
    -c "$clients" --json --url "$url" >"$out/churn-mcp-stress.json" 2>"$out/churn-mcp-stress.log"
  local conns; conns_done
  # shellcheck disable=SC2086 # conns is key=value words
  row mcp-stress mcp-stress "$out/churn-mcp-stress.json" time="$out/churn-mcp-stress.time" \
    server_ticks=$(($(cpu_ticks "$server_pid") - before)) hz="$hz" load="$load" $conns
  stop_server
}

# fleet_open NAME RATE DURATION [serve flags…]
# fleet_open NAME RATE DURATION [serve flags…]: the open model against a fresh server,
# with the run flags in the array open_flags (empty unless a section sets it).
open_flags=()
fleet_open() {
  local name=$1 r=$2 d=$3 load before
  shift 3
  start_server "$@"
  before=$(cpu_ticks "$server_pid")
  load=$(load_avg)
  timed "$out/$name.time" "$bin" run profiles/open-handshake.toml --target "$url" \
    --rate "$r/s" --duration "$d" --max-in-flight 20000 --out "$out/$name" --quiet \
    "${open_flags[@]}" >/dev/null
  row open "$name" "$out/$name/summary.json" time="$out/$name.time" target_rate="$r" load="$load" \
    server_ticks=$(($(cpu_ticks "$server_pid") - before)) hz="$hz"
  stop_server
}

section_open() {
  echo "== open: ${rate}/s" >&2
  fleet_open "open-$rate" "$rate" 20s
}

section_ceiling() {
  echo "== ceiling: open model with --keep-alive at $ceiling_rates sessions/s" >&2
  local r
  open_flags=(--keep-alive)
  for r in $ceiling_rates; do
    fleet_open "ceiling-$r" "$r" "$duration"
  done
  open_flags=()
}

section_stall() {
  echo "== stall: ${stall_rate}/s, server stalls 1s at 4s" >&2
  fleet_open stall-baseline "$stall_rate" 10s
  fleet_open stall-1s "$stall_rate" 10s --stall-at 4s --stall-for 1s
}

# Memory per long-lived session: profiles/soak-20k.toml (half WebSocket, half Streamable
# HTTP with the GET stream: 1.5 connections per session on each side) ramped to N and held;
# RSS is sampled during the hold. When one process's open-file limit (hard limit, which
# an unprivileged or capability-less root cannot raise) cannot hold 1.5 N sockets, the N
# sessions are split over several generator + server pairs and their RSS summed.
section_memory() {
  echo "== memory: long-lived sessions ($mem_sizes)" >&2
  local n parts per ramp hold load i nofile
  nofile=$(ulimit -Hn)
  for n in $mem_sizes; do
    parts=$(((n * 3 / 2 + nofile - 2001) / (nofile - 2000)))
    per=$((n / parts))
    ramp=$((n / 1000 + 5))
    hold=15
    load=$(load_avg)
    local gens=() servers=() ports=() summaries=()
    for i in $(seq "$parts"); do
      start_server
      servers+=("$server_pid")
      ports+=("$port")
      timeout -k 5 300 taskset -c "$gen_core" "$bin" run "$mem_profile" \
        --target "$url" --ramp "$per:${ramp}s,$per:${hold}s" --source-addresses 127.0.0.1-127.0.0.4 \
        --out "$out/memory-$n-$i" --quiet >/dev/null 2>"$out/memory-$n-$i.log" &
      gens+=("$!")
      pids+=("$!")
      summaries+=("$out/memory-$n-$i/summary.json")
    done
    sleep $((ramp + hold - 5))
    local rss=0 srv=0 conns=0 g s p
    for g in "${gens[@]}"; do
      # timeout's child is mcp-fleet (taskset exec'd it).
      rss=$((rss + $(awk '/VmRSS/{print $2}' "/proc/$(pgrep -P "$g")/status")))
    done
    for s in "${servers[@]}"; do rss_s=$(awk '/VmRSS/{print $2}' "/proc/$s/status"); srv=$((srv + rss_s)); done
    for p in "${ports[@]}"; do conns=$((conns + $(ss -Htn state established "( sport = :$p )" | wc -l))); done
    for g in "${gens[@]}"; do wait "$g" || true; done
    row memory "memory-$n" "$(IFS=,; echo "${summaries[*]}")" sessions="$n" processes="$parts" \
      gen_rss_kb="$rss" server_rss_kb="$srv" server_conns="$conns" load="$load"
    for s in "${servers[@]}"; do kill "$s" 2>/dev/null || true; wait "$s" 2>/dev/null || true; done
  done
}

for s in $sections; do "section_$s"; done
python3 benches/figures.py report "$rows" | tee "$out/report.md"
