#!/usr/bin/env bash
# The MCP server SDK reference benchmark (issue 36): every stack of interop/ on each
# transport and era it serves, measured the same way, one JSON line per cell, then
# results/SDK-MATRIX.md and results/sdk-matrix.html (benches/sdk_matrix.py).
#
#   benches/sdk-matrix.sh                       # the full matrix (about 3 hours)
#   QUICK=1 benches/sdk-matrix.sh               # a compressed sitting (about 35 minutes)
#   QUICK=1 ONLY='^py1-http$' benches/sdk-matrix.sh          # one cell (a regex on cell names)
#   QUICK=1 ONLY=go-sdk PARTS=ceiling benches/sdk-matrix.sh  # some measures only
#   LIST=1 benches/sdk-matrix.sh                # the cells, without measuring
#
# Per cell, the server pinned to SERVER_CORE (default 1), the generator to GEN_CORE (0):
#   conformance  `run --strict --probe-undeclared`, the default discovery session
#                (CONF_SESSIONS of them; stdio: a quarter)
#   held         calls/s of `echo` on HELD_CLIENTS held sessions (the median second)
#   ceiling      `ceiling profiles/handshake.toml`, SLOs p99(session) < 50ms and
#                error_rate < 1%, --server-pid (HTTP: --keep-alive); its bound
#   latency      p50/p99 of the handshake, tools/list, tools/call at half the ceiling's
#                request rate (sessions of the handshake and two requests more)
#   memory       server RSS per held idle session, at each N of MEM_SESSIONS: the RSS
#                between plateaus of N/10 and N sessions, over the sessions between
#   abandon      server RSS per abandoned session over a SOAK-long run, the soak verdict
# Stdio cells spawn the server per session (pinned by `taskset` in the --stdio command):
# no ceiling, memory or abandon (the process is the session); the latency is one client's
# sessions back to back.
#
# Settings (environment; QUICK=1 changes the defaults in brackets): STEP 10s [2s],
# WARMUP 2s [1s], FACTOR 2 [4], RESOLUTION 5% [15%], RETRIES 1 (the ceiling search: a
# failing rate is measured once more, and passes if either try does), FROM 10/s,
# TO 20000/s, HELD 10s [4s], HELD_CLIENTS 4, LATENCY 20s [4s], MEM_SESSIONS '1000 10000'
# [1000], RAMP 10s [4s], HOLD 10s [4s], SOAK 2m [24s], CONF_SESSIONS 100 [20], CEILINGS_FROM
# (a sitting's folder whose ceilings set the latency rate, for PARTS=latency), PARTS
# (conformance,held,ceiling,latency,memory,abandon), ONLY, FLEET_BIN (benches/lib.sh).
#
# Output: results/sdk-matrix-<time>/<cell>/ (each measure's results folder, commands.sh,
# the server's log) and rows.jsonl (one line per cell, the command that reproduces it);
# REPORT=1 (the default) then rewrites results/SDK-MATRIX.md and results/sdk-matrix.html.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

ROOT=$PWD
WORK=$ROOT/target/interop
say() { printf '%s\n' "$*" >&2; }
# Pins, installs and builds of the interop stacks (shared with interop/run.sh).
# shellcheck source=interop/stacks.sh
source interop/stacks.sh
# shellcheck source=interop/sdk_checks.sh
source interop/sdk_checks.sh

quick=${QUICK:-0}
if [[ $quick == 1 ]]; then
  d_step=2s d_warmup=1s d_factor=4 d_res=15% d_held=4s d_lat=4s d_mem=1000 d_ramp=4s d_hold=4s d_soak=24s d_conf=20
else
  d_step=10s d_warmup=2s d_factor=2 d_res=5% d_held=10s d_lat=20s d_mem='1000 10000' d_ramp=10s d_hold=10s d_soak=2m d_conf=100
fi
step=${STEP:-$d_step}
warmup=${WARMUP:-$d_warmup}
factor=${FACTOR:-$d_factor}
resolution=${RESOLUTION:-$d_res}
retries=${RETRIES:-1}
from=${FROM:-10}
to=${TO:-20000}
held=${HELD:-$d_held}
held_clients=${HELD_CLIENTS:-4}
latency=${LATENCY:-$d_lat}
mem_sessions=${MEM_SESSIONS:-$d_mem}
ramp=${RAMP:-$d_ramp}
hold=${HOLD:-$d_hold}
soak=${SOAK:-$d_soak}
conf_sessions=${CONF_SESSIONS:-$d_conf}
parts=${PARTS:-conformance,held,ceiling,latency,memory,abandon}
only=${ONLY:-.}
report=${REPORT:-1}
# Stdio sessions start a process each (a JVM takes seconds): their held run is longer, and
# its first and last active seconds are left out as everywhere.
stdio_extra=10

rmcp_bin=$target_dir/release/rmcp-peer
rmcp_version=$(awk '/^name = "rmcp"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
java_cp="$WORK/java-sdk/java-sdk-server.jar:$WORK/java-sdk/lib/*"
ts2_env="MCP_TS2_MODULES=$WORK/npm-ts2/node_modules"
py_server=interop/python_server.py

# name|stack|version|transport|mode|era|kind|server command ({port}: the port; words split
# without globbing, so Java's `lib/*` classpath stays as it is).
cells=(
  "ts1-http|TypeScript SDK v1 (server-everything)|1.32.2|Streamable HTTP|sessions|2025-11-25|http|env PORT={port} node --require ./interop/loopback.cjs $EVERYTHING streamableHttp"
  "ts1-sse|TypeScript SDK v1 (server-everything)|1.32.2|legacy SSE|sessions|2024-11-05|sse|env PORT={port} node --require ./interop/loopback.cjs $EVERYTHING sse"
  "ts1-stdio|TypeScript SDK v1 (server-everything)|1.32.2|stdio|process|2025-11-25|stdio|node $EVERYTHING stdio"
  "ts2-http|TypeScript SDK v2|$TS2_VERSION|Streamable HTTP|stateless|2025-11-25|http|env $ts2_env node interop/ts-v2/server.mjs http {port}"
  "ts2-http-modern|TypeScript SDK v2|$TS2_VERSION|Streamable HTTP|stateless|2026-07-28|http|env $ts2_env node interop/ts-v2/server.mjs http {port}"
  "ts2-sessions|TypeScript SDK v2|$TS2_VERSION|Streamable HTTP|sessions|2025-11-25|http|env $ts2_env node interop/ts-v2/server.mjs http {port} --sessions"
  "ts2-stdio|TypeScript SDK v2|$TS2_VERSION|stdio|process|2025-11-25|stdio|env $ts2_env node interop/ts-v2/server.mjs stdio"
  "py1-http|Python mcp 1.x|$MCP1_VERSION|Streamable HTTP|sessions|2025-11-25|http|$WORK/venv/bin/python $py_server streamable-http {port}"
  "py1-stateless|Python mcp 1.x|$MCP1_VERSION|Streamable HTTP|stateless|2025-11-25|http|$WORK/venv/bin/python $py_server streamable-http {port} --stateless"
  "py1-sse|Python mcp 1.x|$MCP1_VERSION|legacy SSE|sessions|2024-11-05|sse|$WORK/venv/bin/python $py_server sse {port}"
  "py1-ws|Python mcp 1.x|$MCP1_VERSION|WebSocket|sessions|2025-11-25|ws|$WORK/venv/bin/python $py_server websocket {port}"
  "py1-stdio|Python mcp 1.x|$MCP1_VERSION|stdio|process|2025-11-25|stdio|$WORK/venv/bin/python $py_server stdio"
  "py2-http|Python mcp 2.x|$MCP2_VERSION|Streamable HTTP|sessions|2025-11-25|http|$WORK/venv2/bin/python $py_server streamable-http {port}"
  "py2-stateless-modern|Python mcp 2.x|$MCP2_VERSION|Streamable HTTP|stateless|2026-07-28|http|$WORK/venv2/bin/python $py_server streamable-http {port} --stateless"
  "py2-sse|Python mcp 2.x|$MCP2_VERSION|legacy SSE|sessions|2024-11-05|sse|$WORK/venv2/bin/python $py_server sse {port}"
  "py2-stdio|Python mcp 2.x|$MCP2_VERSION|stdio|process|2025-11-25|stdio|$WORK/venv2/bin/python $py_server stdio"
  "py2-stdio-modern|Python mcp 2.x|$MCP2_VERSION|stdio|process|2026-07-28|stdio|$WORK/venv2/bin/python $py_server stdio"
  "rmcp-http|Rust rmcp|$rmcp_version|Streamable HTTP|sessions|2025-11-25|http|$rmcp_bin --http 127.0.0.1:{port}"
  "rmcp-stateless-modern|Rust rmcp|$rmcp_version|Streamable HTTP|stateless|2026-07-28|http|$rmcp_bin --http 127.0.0.1:{port} --stateless"
  "rmcp-stdio|Rust rmcp|$rmcp_version|stdio|process|2025-11-25|stdio|$rmcp_bin --stdio"
  "go-sdk-http|Go SDK (official)|$GO_SDK_VERSION|Streamable HTTP|sessions|2025-11-25|http|$WORK/bin/go-sdk-server http {port}"
  "go-sdk-stateless-modern|Go SDK (official)|$GO_SDK_VERSION|Streamable HTTP|stateless|2026-07-28|http|$WORK/bin/go-sdk-server http {port} --stateless"
  "go-sdk-sse|Go SDK (official)|$GO_SDK_VERSION|legacy SSE|sessions|2024-11-05|sse|$WORK/bin/go-sdk-server sse {port}"
  "go-sdk-stdio|Go SDK (official)|$GO_SDK_VERSION|stdio|process|2025-11-25|stdio|$WORK/bin/go-sdk-server stdio"
  "mcp-go-http|Go mcp-go (mark3labs)|$MCP_GO_VERSION|Streamable HTTP|sessions|2025-11-25|http|$WORK/bin/mcp-go-server http {port}"
  "mcp-go-stateless-modern|Go mcp-go (mark3labs)|$MCP_GO_VERSION|Streamable HTTP|stateless|2026-07-28|http|$WORK/bin/mcp-go-server http {port} --stateless"
  "mcp-go-sse|Go mcp-go (mark3labs)|$MCP_GO_VERSION|legacy SSE|sessions|2024-11-05|sse|$WORK/bin/mcp-go-server sse {port}"
  "mcp-go-stdio|Go mcp-go (mark3labs)|$MCP_GO_VERSION|stdio|process|2025-11-25|stdio|$WORK/bin/mcp-go-server stdio"
  "java-http|Java SDK|$JAVA_SDK_VERSION|Streamable HTTP (Tomcat)|sessions|2025-11-25|http|java -cp $java_cp fleet.InteropServer http {port}"
  "java-modern-http|Java SDK|$JAVA_SDK_VERSION|Streamable HTTP (Tomcat)|stateless|2026-07-28|http|java -cp $java_cp fleet.ModernServer http {port}"
  "java-sse|Java SDK|$JAVA_SDK_VERSION|legacy SSE (Tomcat)|sessions|2024-11-05|sse|java -cp $java_cp fleet.InteropServer sse {port}"
  "java-stdio|Java SDK|$JAVA_SDK_VERSION|stdio|process|2025-11-25|stdio|java -cp $java_cp fleet.InteropServer stdio"
)

if [[ -n ${LIST:-} ]]; then
  for c in "${cells[@]}"; do IFS='|' read -r name stack version transport mode era _ <<<"$c"; echo "$name: $stack $version, $transport, $mode, $era"; done
  exit 0
fi

want() { [[ ,$parts, == *,$1,* ]]; }

# What the selected cells need, built or installed once (cached under target/interop/).
need() { local c; for c in "${cells[@]}"; do [[ ${c%%|*} =~ $only && ${c%%|*} == $1* ]] && return 0; done; return 1; }
build_fleet
if need ts1; then install_everything >&2; fi
if need ts2; then install_ts2 >&2; fi
if need py1; then install_venv "$WORK/venv" "$MCP1_VERSION" >&2; fi
if need py2; then install_venv "$WORK/venv2" "$MCP2_VERSION" >&2; fi
if need rmcp && [[ ! -x $rmcp_bin ]]; then cargo build --release --quiet -p rmcp-peer; fi
if need go-sdk; then build_go go-sdk go-sdk-server >&2; fi
if need mcp-go; then build_go mcp-go mcp-go-server >&2; fi
if need java; then build_java >&2; fi

commit=$(git rev-parse --short HEAD)
[[ -z $(git status --porcelain --untracked-files=no) ]] || commit="$commit+dirty"
sitting=$(date -u +%Y%m%dT%H%M%SZ)
out=results/sdk-matrix-$sitting
mkdir -p "$out"
rows=$out/rows.jsonl
say "sdk-matrix: $commit, $(nproc) cores (server on $server_core, generator on $gen_core), load $(load_avg), QUICK=$quick; $out"

# The settings every row states (and the reproducing command repeats).
settings="STEP=$step WARMUP=$warmup FACTOR=$factor RESOLUTION=$resolution RETRIES=$retries FROM=$from TO=$to HELD=$held HELD_CLIENTS=$held_clients LATENCY=$latency MEM_SESSIONS='$mem_sessions' RAMP=$ramp HOLD=$hold SOAK=$soak CONF_SESSIONS=$conf_sessions"

# fleet DIR ARGS…: one mcp-fleet command on the generator core, bounded in time; the
# command goes to the cell's commands.sh (what reproduces it by hand, the server aside).
fleet() {
  local name=$1
  shift
  printf '%q ' taskset -c "$gen_core" "$bin" "$@" >>"$cell_dir/commands.sh"
  echo >>"$cell_dir/commands.sh"
  timeout -k 5 900 taskset -c "$gen_core" "$bin" "$@" --color never >"$cell_dir/$name.log" 2>&1 || true
}

# up: the cell's server on a free port, pinned; sets server_pid, url. Java takes seconds.
up() {
  local argv
  port=$(free_port)
  read -ra argv <<<"${server_cmd//\{port\}/$port}"
  echo "taskset -c $server_core ${argv[*]}   # the server" >>"$cell_dir/commands.sh"
  taskset -c "$server_core" "${argv[@]}" >>"$cell_dir/server.log" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  url=http://127.0.0.1:$port/mcp
  [[ $kind == sse ]] && url=http://127.0.0.1:$port/sse
  [[ $kind == ws ]] && url=ws://127.0.0.1:$port/ws
  for _ in $(seq 600); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  say "  $name: the server did not listen on $port: $(tail -3 "$cell_dir/server.log")"
  down
  return 1
}

down() {
  kill "$server_pid" 2>/dev/null || true
  for _ in $(seq 20); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
}

rss_bytes() { awk '/^VmRSS/ { print $2 * 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# The latency run's rate: half the ceiling's request rate, in latency sessions (the
# handshake's requests at the ceiling, and tools/list and tools/call: two more), so every
# stack is measured at half its load, not past it; empty without a ceiling.
latency_rate() {
  local from=$cell_dir/ceiling/ceiling.json
  # CEILINGS_FROM=results/sdk-matrix-<sitting>: the ceilings of that sitting (PARTS=latency).
  [[ -n ${CEILINGS_FROM:-} ]] && from=$CEILINGS_FROM/$name/ceiling/ceiling.json
  python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["answer"]
c = a.get("ceiling_per_s")
if c:
    per = (a.get("calls_per_s") or c) / c
    print("%.3g" % max(c * per / (per + 2) / 2, 1))' "$from" 2>/dev/null || true
}

measure() {
  local target=() ceil rate n
  if [[ $kind == stdio ]]; then
    target=(--stdio "taskset -c $server_core $server_cmd")
  fi
  case $era in
    2026-07-28) flags=(--era modern --protocol-version 2026-07-28) ;;
    2024-11-05) flags=(--transport sse --protocol-version 2024-11-05) ;;
    *) flags=() ;;
  esac
  local ka=()
  [[ $kind == http ]] && ka=(--keep-alive)

  if [[ $kind == stdio ]]; then
    # A process per session: a quarter of the sessions (a JVM or an interpreter each).
    want conformance && fleet conformance run "${target[@]}" "${flags[@]}" --sessions "$((conf_sessions / 4 + 1))" --clients 2 \
      --strict --probe-undeclared --quiet --out "$cell_dir/conformance"
    want held && fleet held run benches/sdk-matrix/held.toml "${target[@]}" "${flags[@]}" --clients "$held_clients" \
      --duration "$(($(secs "$held") + stdio_extra))s" --quiet --out "$cell_dir/held"
    want latency && fleet latency run benches/sdk-matrix/latency.toml "${target[@]}" "${flags[@]}" --clients 1 \
      --duration "$latency" --quiet --out "$cell_dir/latency"
    return 0
  fi

  # Each of these on a server of its own, freshly started: a search ends past the server's
  # saturation and the held and conformance runs leave sessions behind, which a run after
  # them on the same process would pay for.
  if want conformance || want held; then
    if up; then
      target=(--target "$url")
      want conformance && fleet conformance run "${target[@]}" "${flags[@]}" --sessions "$conf_sessions" --clients 4 \
        --strict --probe-undeclared --quiet --out "$cell_dir/conformance"
      want held && fleet held run benches/sdk-matrix/held.toml "${target[@]}" "${flags[@]}" "${ka[@]}" \
        --clients "$held_clients" --duration "$held" --quiet --out "$cell_dir/held"
      down
    fi
  fi
  if want ceiling && up; then
      target=(--target "$url")
      fleet ceiling ceiling profiles/handshake.toml "${target[@]}" "${flags[@]}" "${ka[@]}" \
        --server-pid "$server_pid" --from "$from/s" --to "$to/s" --factor "$factor" --resolution "$resolution" \
        --retries "$retries" --step "$step" --step-warmup "$warmup" --max-in-flight 20000 \
        --slo 'p99(session) < 50ms' --slo 'error_rate < 1%' --quiet --out "$cell_dir/ceiling"
      down
  fi
  if want latency; then
    rate=$(latency_rate)
    if [[ -n $rate ]] && up; then
      target=(--target "$url")
      fleet latency run benches/sdk-matrix/latency.toml "${target[@]}" "${flags[@]}" "${ka[@]}" \
        --rate "$rate/s" --duration "$latency" --server-pid "$server_pid" --quiet --out "$cell_dir/latency"
      down
    fi
  fi

  # Memory and abandonment on a fresh server each, so what the searches left is not in it.
  if want memory && [[ $mode == sessions ]]; then
    for n in $mem_sessions; do
      up || break
      sleep 1
      rss_bytes "$server_pid" >"$cell_dir/memory-$n.base"
      # Two plateaus, a tenth of N then N: the RSS between them per session leaves out
      # what the first sessions cost once (code paths warmed, pools grown).
      r=$(secs "$ramp") h=$(secs "$hold")
      echo "$((n / 10)) $((r + h)) $n $((2 * r + 2 * h)) $h" >"$cell_dir/memory-$n.stages"
      fleet "memory-$n" run benches/sdk-matrix/memory.toml --target "$url" "${flags[@]}" \
        --ramp "$((n / 10)):$ramp,$((n / 10)):$hold,$n:$ramp,$n:$hold" --server-pid "$server_pid" --timeout 30s \
        --quiet --out "$cell_dir/memory-$n"
      down
    done
  fi
  if want abandon && [[ $mode == sessions ]] && up; then
    fleet abandon run benches/sdk-matrix/abandon.toml --target "$url" "${flags[@]}" --server-pid "$server_pid" \
      --duration "$soak" --quiet --out "$cell_dir/abandon"
    down
  fi
}

secs() { # 4s, 2m → seconds
  case $1 in *m) echo $((${1%m} * 60)) ;; *s) echo "${1%s}" ;; *) echo "$1" ;; esac
}

for c in "${cells[@]}"; do
  IFS='|' read -r name stack version transport mode era kind server_cmd <<<"$c"
  [[ $name =~ $only ]] || continue
  cell_dir=$out/$name
  mkdir -p "$cell_dir"
  echo "# $name: $stack $version, $transport, $mode, $era (run from the repository root)" >"$cell_dir/commands.sh"
  load0=$(load_avg)
  t0=$(date +%s)
  say "$name: $stack $version, $transport ($mode, $era); load $load0"
  measure
  load1=$(load_avg)
  python3 benches/sdk_matrix.py row "$cell_dir" \
    cell="$name" stack="$stack" version="$version" transport="$transport" mode="$mode" era="$era" kind="$kind" \
    commit="$commit" sitting="$sitting" cores="$(nproc) cores: server on $server_core, generator on $gen_core" \
    load_start="$load0" load_end="$load1" seconds="$(($(date +%s) - t0))" settings="$settings" parts="$parts" \
    command="QUICK=$quick $settings ONLY='^$name\$' benches/sdk-matrix.sh" >>"$rows"
  tail -1 "$rows" | python3 benches/sdk_matrix.py line >&2
done

if [[ $report == 1 ]]; then
  python3 benches/sdk_matrix.py report "$rows" --md results/SDK-MATRIX.md --html results/sdk-matrix.html
  say "wrote results/SDK-MATRIX.md and results/sdk-matrix.html from $rows"
fi
echo "$rows"
