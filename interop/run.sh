#!/usr/bin/env bash
# Interop suite: mcp-fleet against pinned third-party MCP servers, installed here on
# first use (npm, PyPI, the Go module proxy), all on 127.0.0.1 with ports picked at run time.
#
#   MCP_FLEET=target/release/mcp-fleet interop/run.sh
#
# Env: MCP_FLEET (default target/release/mcp-fleet, relative to the repo root),
#      INTEROP_ONLY (a regex: run only the checks whose name matches),
#      INTEROP_TIMEOUT (per-request timeout for mcp-fleet, default 10s).
# Prints one line per check and ends with `interop: N passed, M failed`; exits 1 if
# any check failed. Results and server logs: target/interop/results/<check>/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Real application servers, for generated and pinned arguments (issue 16).
MEMORY_VERSION="2026.8.31"       # @modelcontextprotocol/server-memory (npm)
TIME_VERSION="2026.10.19"        # mcp-server-time (PyPI)

FLEET="${MCP_FLEET:-target/release/mcp-fleet}"
case "$FLEET" in /*) ;; *) FLEET="$ROOT/$FLEET" ;; esac
ONLY="${INTEROP_ONLY:-}"
REQ_TIMEOUT="${INTEROP_TIMEOUT:-10s}"
RUN_LIMIT=180                    # hard wall-clock bound per mcp-fleet run, seconds

WORK="$ROOT/target/interop"
RESULTS="$WORK/results"
LOOPBACK="$ROOT/interop/loopback.cjs"
PY_SERVER="$ROOT/interop/python_server.py"
MEMORY_DIR="$WORK/npm-memory/node_modules/@modelcontextprotocol/server-memory"
MEMORY_SERVER="$ROOT/interop/memory_server.sh"
MEMORY_FILES="$WORK/memory"      # one knowledge-graph file per session, emptied per run
TIME_VENV="$WORK/venv-time"
PROFILES="$ROOT/interop/profiles"
CHECK="$ROOT/interop/check_summary.py"
# The pins and installs of server-everything and the Python SDK (shared with benches/sdk-matrix.sh).
# shellcheck source=interop/stacks.sh
source "$ROOT/interop/stacks.sh"

passed=0
failed=0
failed_names=()
SERVER_PIDS=()

cleanup() {
  local pid
  for pid in "${SERVER_PIDS[@]:-}"; do
    [ -n "$pid" ] || continue
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${SERVER_PIDS[@]:-}"; do
    [ -n "$pid" ] || continue
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  SERVER_PIDS=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf '%s\n' "$*"; }

# ---------------------------------------------------------------- install (cached)

installed_memory_version() {
  [ -f "$MEMORY_DIR/package.json" ] || return 0
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$MEMORY_DIR/package.json"
}

install_memory() {
  if [ "$(installed_memory_version)" = "$MEMORY_VERSION" ]; then return 0; fi
  say "install: @modelcontextprotocol/server-memory@$MEMORY_VERSION (npm)"
  mkdir -p "$WORK/npm-memory"
  if ! npm install --prefix "$WORK/npm-memory" --no-audit --no-fund --loglevel=error \
      "@modelcontextprotocol/server-memory@$MEMORY_VERSION" >"$WORK/npm-memory-install.log" 2>&1; then
    tail -20 "$WORK/npm-memory-install.log"; return 1
  fi
}

install_time() {
  local got
  got="$("$TIME_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp-server-time"))' 2>/dev/null || true)"
  if [ "$got" = "$TIME_VERSION" ]; then return 0; fi
  say "install: mcp-server-time==$TIME_VERSION (pip, $TIME_VENV)"
  rm -rf "$TIME_VENV"
  python3 -m venv "$TIME_VENV" &&
    "$TIME_VENV/bin/pip" install --disable-pip-version-check -q "mcp-server-time==$TIME_VERSION" >"$TIME_VENV.install.log" 2>&1 ||
    { tail -20 "$TIME_VENV.install.log"; return 1; }
}

# ---------------------------------------------------------------- servers

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

wait_port() { # PORT PID → 0 when 127.0.0.1:PORT accepts, 1 if PID died or 30 s passed
  python3 - "$1" "$2" <<'EOF'
import os, socket, sys, time
port, pid = int(sys.argv[1]), int(sys.argv[2])
deadline = time.time() + 30
while time.time() < deadline:
    try:
        socket.create_connection(("127.0.0.1", port), 0.5).close()
        sys.exit(0)
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit(1)
    time.sleep(0.1)
sys.exit(1)
EOF
}

# start_server NAME PORT CMD… : starts CMD in the background (log in the results folder),
# waits for the port; sets SERVER_PID. Returns 1 if it did not come up.
start_server() {
  local name="$1" port="$2"; shift 2
  mkdir -p "$RESULTS"
  "$@" >"$RESULTS/$name.server.log" 2>&1 &
  SERVER_PID=$!
  SERVER_PIDS+=("$SERVER_PID")
  if ! wait_port "$port" "$SERVER_PID"; then
    say "server $name did not listen on 127.0.0.1:$port; log:"
    tail -5 "$RESULTS/$name.server.log" | sed 's/^/    /'
    return 1
  fi
}

stop_server() { # PID
  kill "$1" 2>/dev/null || true
  for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$1" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  local kept=() pid
  for pid in "${SERVER_PIDS[@]:-}"; do [ "$pid" = "$1" ] || kept+=("$pid"); done
  SERVER_PIDS=("${kept[@]:-}")
}

# ---------------------------------------------------------------- checks

selected() { [ -z "$ONLY" ] || [[ "$1" =~ $ONLY ]]; }
any_selected() { local n; for n in "$@"; do selected "$n" && return 0; done; return 1; }

record() { # NAME OK MESSAGE…
  local name="$1" ok="$2"; shift 2
  if [ "$ok" = 1 ]; then
    passed=$((passed + 1)); printf 'PASS  %-28s %s\n' "$name" "$*"
  else
    failed=$((failed + 1)); failed_names+=("$name"); printf 'FAIL  %-28s %s\n' "$name" "$*"
  fi
}

# check NAME SESSIONS PHASES [--counter …]… -- MCP-FLEET-RUN-ARGS…
check() {
  local name="$1" sessions="$2" phases="$3"; shift 3
  local extra=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do extra+=("$1"); shift; done
  shift # --
  local out="$RESULTS/$name" rc=0 msg
  rm -rf "$out"
  timeout --kill-after=10 "$RUN_LIMIT" \
    "$FLEET" run "$@" --sessions "$sessions" --timeout "$REQ_TIMEOUT" --quiet --out "$out" \
    >"$RESULTS/$name.fleet.log" 2>&1 || rc=$?
  # A check that expects every session to fail (a real finding) gets exit 1 (no session
  # completed); check_summary.py then asserts exactly those failures.
  local expects_failures=0 e
  for e in "${extra[@]}"; do [ "$e" = --expect-failures ] && expects_failures=1; done
  if [ "$rc" -ne 0 ] && ! { [ "$rc" = 1 ] && [ "$expects_failures" = 1 ]; }; then
    record "$name" 0 "mcp-fleet exited $rc: $(tail -3 "$RESULTS/$name.fleet.log" | tr '\n' ' ')"
    return 0
  fi
  if msg="$(python3 "$CHECK" "$out" --sessions "$sessions" --phases "$phases" "${extra[@]}" 2>&1)"; then
    record "$name" 1 "$msg"
  else
    record "$name" 0 "$msg"
  fi
}

# A family's checks need their server up; if it does not start, each check fails.
server_failed() { # NAMES…
  local n; for n in "$@"; do selected "$n" && record "$n" 0 "server did not start"; done; return 0
}

# The TypeScript SDK's task helper (shared/protocol.js, updateTaskStatus) checks that a
# task is not terminal, then awaits the store: a storeTaskResult in between lets a
# "working" notifications/tasks/status follow "completed". We report that
# (tasks.status-out-of-order), rightly; it happens now and then, so the task checks of
# server-everything accept it and show it on their PASS line.
SDK_TASK_RACE=(--known-finding tasks.status-out-of-order)

LEGACY_DISCOVERY="connect,initialize,initialized,tools/list,resources/list,prompts/list,close"
PROFILE_PHASES="initialize,tools/list,resources/list,resources/templates/list,prompts/list,tools/call,resources/read,prompts/get,ping,close"
TASK_PHASES="initialize,tools/list,tools/call,task,tasks/get,tasks/result,tasks/cancel,close"
MODERN_PHASES="tools/list,resources/list,resources/templates/list,prompts/list,tools/call,resources/read,prompts/get,close"

everything_checks() {
  local port pid
  # 1. stdio: the command is spawned once per session.
  if selected everything-stdio; then
    check everything-stdio 20 "$LEGACY_DISCOVERY" -- \
      --stdio "node $EVERYTHING stdio" --clients 4
  fi
  if selected everything-profile-stdio; then
    check everything-profile-stdio 24 "$PROFILE_PHASES" -- \
      "$PROFILES/everything.toml" --stdio "node $EVERYTHING stdio" --clients 4
  fi
  # Its task tool (execution.taskSupport = required), called as a task (2025-11-25).
  if selected everything-tasks-stdio; then
    check everything-tasks-stdio 4 "$TASK_PHASES" --counter tasks_cancelled\>0 "${SDK_TASK_RACE[@]}" -- \
      "$PROFILES/everything-tasks.toml" --stdio "node $EVERYTHING stdio"
  fi

  # 2. Streamable HTTP on /mcp.
  if any_selected everything-http everything-http-auto everything-profile-http everything-tasks-http; then
    port="$(free_port)"
    if start_server everything-http "$port" env PORT="$port" node --require "$LOOPBACK" "$EVERYTHING" streamableHttp; then
      pid=$SERVER_PID
      selected everything-http && check everything-http 200 "$LEGACY_DISCOVERY" -- \
        --target "http://127.0.0.1:$port/mcp" --clients 10
      selected everything-http-auto && check everything-http-auto 100 "probe,$LEGACY_DISCOVERY" \
        --counter era_legacy=100 --counter era_modern=0 -- \
        --target "http://127.0.0.1:$port/mcp" --era auto --clients 10
      selected everything-profile-http && check everything-profile-http 120 "$PROFILE_PHASES" \
        --counter get_stream_opened\>0 -- \
        "$PROFILES/everything.toml" --target "http://127.0.0.1:$port/mcp" --clients 8
      selected everything-tasks-http && check everything-tasks-http 4 "$TASK_PHASES" \
        --counter tasks_cancelled\>0 "${SDK_TASK_RACE[@]}" -- \
        "$PROFILES/everything-tasks.toml" --target "http://127.0.0.1:$port/mcp"
      stop_server "$pid"
    else
      server_failed everything-http everything-http-auto everything-profile-http everything-tasks-http
    fi
  fi

  # 3. Legacy HTTP+SSE: GET /sse, POST /message?sessionId=….
  if any_selected everything-sse everything-profile-sse; then
    port="$(free_port)"
    if start_server everything-sse "$port" env PORT="$port" node --require "$LOOPBACK" "$EVERYTHING" sse; then
      pid=$SERVER_PID
      selected everything-sse && check everything-sse 200 "$LEGACY_DISCOVERY" -- \
        --target "http://127.0.0.1:$port/sse" --transport sse --protocol-version 2024-11-05 --clients 10
      selected everything-profile-sse && check everything-profile-sse 120 "$PROFILE_PHASES" -- \
        "$PROFILES/everything.toml" --target "http://127.0.0.1:$port/sse" --transport sse --clients 8
      stop_server "$pid"
    else
      server_failed everything-sse everything-profile-sse
    fi
  fi
}

python_checks() { # TAG VENV
  local tag="$1" py="$2/bin/python" port pid
  # 4. stdio (slow: each session starts a Python interpreter and imports the SDK).
  selected "$tag-stdio" && check "$tag-stdio" 8 "$PROFILE_PHASES" -- \
    "$PROFILES/python.toml" --stdio "$py $PY_SERVER stdio" --clients 2

  if any_selected "$tag-http" "$tag-profile-http" "$tag-arguments-http" "$tag-faults-http" "$tag-http-auto" "$tag-dual-http"; then
    port="$(free_port)"
    if start_server "$tag-http" "$port" "$py" "$PY_SERVER" streamable-http "$port"; then
      pid=$SERVER_PID
      selected "$tag-http" && check "$tag-http" 200 "$LEGACY_DISCOVERY" -- \
        --target "http://127.0.0.1:$port/mcp" --clients 10
      selected "$tag-profile-http" && check "$tag-profile-http" 200 "$PROFILE_PHASES" \
        --counter get_stream_opened\>0 -- \
        "$PROFILES/python.toml" --target "http://127.0.0.1:$port/mcp" --clients 10
      # Generated arguments for pydantic-model tools, which the SDK validates itself.
      selected "$tag-arguments-http" && check "$tag-arguments-http" 40 "tools/list,tools/call" \
        --rpc-errors-ok --min-accepted 0.95 -- \
        "$PROFILES/python-arguments.toml" --target "http://127.0.0.1:$port/mcp"
      # Buggy clients (issue 14): verdicts recorded as they are, none may hang the run.
      selected "$tag-faults-http" && check "$tag-faults-http" 60 "" --client-faults 8 -- \
        "$PROFILES/python-faults.toml" --target "http://127.0.0.1:$port/mcp"
      if [ "$tag" = py1 ]; then
        # A 1.x server has no server/discover: auto must fall back to initialize.
        selected "$tag-http-auto" && check "$tag-http-auto" 100 "probe,$PROFILE_PHASES" \
          --counter era_legacy=100 --counter era_modern=0 -- \
          "$PROFILES/python-era.toml" --target "http://127.0.0.1:$port/mcp" --era auto --clients 10
      else
        # 2.x answers server/discover: auto goes modern; and one endpoint, both eras.
        selected "$tag-http-auto" && check "$tag-http-auto" 200 "probe,$MODERN_PHASES" \
          --counter era_modern=200 -- \
          "$PROFILES/python-era.toml" --target "http://127.0.0.1:$port/mcp" --era auto --clients 10
        selected "$tag-dual-http" && check "$tag-dual-http" 150 "probe,discover,initialize,$MODERN_PHASES" \
          --counter era_modern\>0 --counter get_stream_opened\>0 -- \
          "$PROFILES/python2-dual.toml" --target "http://127.0.0.1:$port/mcp"
      fi
      stop_server "$pid"
    else
      server_failed "$tag-http" "$tag-profile-http" "$tag-arguments-http" "$tag-faults-http" "$tag-http-auto" "$tag-dual-http"
    fi
  fi

  if [ "$tag" = py2 ] && selected "$tag-stateless-modern"; then
    port="$(free_port)"
    if start_server "$tag-stateless" "$port" "$py" "$PY_SERVER" streamable-http "$port" --stateless; then
      pid=$SERVER_PID
      check "$tag-stateless-modern" 200 "discover,$MODERN_PHASES" --counter era_modern=200 -- \
        "$PROFILES/python-era.toml" --target "http://127.0.0.1:$port/mcp" --era modern --clients 10
      stop_server "$pid"
    else
      server_failed "$tag-stateless-modern"
    fi
  fi

  # 2026-07-28 listeners on the SDK's own subscriptions/listen: every session listens to
  # the tool list and calls `notify_list_changed` once a second; each change reaches every listen.
  if [ "$tag" = py2 ] && selected "$tag-listen"; then
    port="$(free_port)"
    if start_server "$tag-listen" "$port" "$py" "$PY_SERVER" streamable-http "$port" --change-tool; then
      pid=$SERVER_PID
      check "$tag-listen" 4 "discover,tools/call,subscriptions/listen" \
        --counter listen_opened=4 --counter listen_notifications\>8 --counter listen_dropped=0 \
        --counter changes_triggered=4 -- \
        "$PROFILES/listen.toml" --target "http://127.0.0.1:$port/mcp" --strict --probe-undeclared
      stop_server "$pid"
    else
      server_failed "$tag-listen"
    fi
  fi

  if [ "$tag" = py2 ] && selected "$tag-stdio-auto"; then
    check "$tag-stdio-auto" 6 "probe,$MODERN_PHASES" --counter era_modern=6 -- \
      "$PROFILES/python-era.toml" --stdio "$py $PY_SERVER stdio" --era auto --clients 2
  fi

  # mcp 1.x's WebSocket transport (`mcp[ws]`; 2.x removed it): the same profile over ws://.
  if [ "$tag" = py1 ] && selected "$tag-ws"; then
    port="$(free_port)"
    if start_server "$tag-ws" "$port" "$py" "$PY_SERVER" websocket "$port"; then
      pid=$SERVER_PID
      check "$tag-ws" 100 "$PROFILE_PHASES" -- \
        "$PROFILES/python.toml" --target "ws://127.0.0.1:$port/ws" --clients 8 --strict --probe-undeclared
      stop_server "$pid"
    else
      server_failed "$tag-ws"
    fi
  fi

  # The SDK's auth (mcp 1.x): sessions with a token from the file complete, those
  # without get its 401 with WWW-Authenticate and walk the discovery.
  if [ "$tag" = py1 ] && selected "$tag-auth-http"; then
    port="$(free_port)"
    if start_server "$tag-auth" "$port" "$py" "$PY_SERVER" streamable-http "$port" \
        --auth-tokens "$ROOT/interop/data/python-tokens.txt"; then
      pid=$SERVER_PID
      local out="$RESULTS/$tag-auth-http" msg rc=0
      rm -rf "$out"
      timeout --kill-after=10 "$RUN_LIMIT" "$FLEET" run "$PROFILES/python-auth.toml" \
        --target "http://127.0.0.1:$port/mcp" --sessions 60 --timeout "$REQ_TIMEOUT" --quiet \
        --out "$out" >"$RESULTS/$tag-auth-http.fleet.log" 2>&1 || rc=$?
      if [ "$rc" -ne 0 ]; then
        record "$tag-auth-http" 0 "mcp-fleet exited $rc: $(tail -3 "$RESULTS/$tag-auth-http.fleet.log" | tr '\n' ' ')"
      elif msg="$(python3 "$ROOT/interop/check_auth.py" "$out" --sessions 60 2>&1)"; then
        record "$tag-auth-http" 1 "$msg"
      else
        record "$tag-auth-http" 0 "$msg"
      fi
      stop_server "$pid"
    else
      server_failed "$tag-auth-http"
    fi
  fi

  if any_selected "$tag-sse" "$tag-profile-sse"; then
    port="$(free_port)"
    if start_server "$tag-sse" "$port" "$py" "$PY_SERVER" sse "$port"; then
      pid=$SERVER_PID
      selected "$tag-sse" && check "$tag-sse" 200 "$LEGACY_DISCOVERY" -- \
        --target "http://127.0.0.1:$port/sse" --transport sse --protocol-version 2024-11-05 --clients 10
      selected "$tag-profile-sse" && check "$tag-profile-sse" 120 "$PROFILE_PHASES" -- \
        "$PROFILES/python.toml" --target "http://127.0.0.1:$port/sse" --transport sse --clients 8
      stop_server "$pid"
    else
      server_failed "$tag-sse" "$tag-profile-sse"
    fi
  fi
  return 0
}

# Real application servers over stdio (each session starts the server). Generated-only
# runs are measured (--min-accepted 0 prints the shares); pinned and captured ones must
# be accepted nearly always.
app_checks() {
  if any_selected time-generated time-pinned; then
    if install_time; then
      local time_cmd="$TIME_VENV/bin/python -m mcp_server_time --local-timezone UTC"
      selected time-generated && check time-generated 8 "tools/list,tools/call" \
        --rpc-errors-ok --min-accepted 0 -- \
        "$PROFILES/time-generated.toml" --stdio "$time_cmd"
      selected time-pinned && check time-pinned 8 "tools/list,tools/call" \
        --min-accepted 0.95 -- \
        "$PROFILES/time.toml" --stdio "$time_cmd"
    else
      record time-install 0 "pip install mcp-server-time==$TIME_VERSION failed"
    fi
  fi
  if any_selected memory-generated memory-captured; then
    if install_memory; then
      rm -rf "$MEMORY_FILES"
      local memory_cmd="bash $MEMORY_SERVER $MEMORY_FILES $MEMORY_DIR/dist/index.js"
      selected memory-generated && check memory-generated 6 "tools/list,tools/call" \
        --rpc-errors-ok --min-accepted 0 --left-out delete_entities -- \
        "$PROFILES/memory-generated.toml" --stdio "$memory_cmd"
      selected memory-captured && check memory-captured 10 "tools/list,tools/call" \
        --min-accepted 0.95 --left-out delete_entities \
        --acceptance-tools create_entities,open_nodes,add_observations,search_nodes -- \
        "$PROFILES/memory.toml" --stdio "$memory_cmd"
    else
      record memory-install 0 "npm install @modelcontextprotocol/server-memory@$MEMORY_VERSION failed"
    fi
  fi
  return 0
}

# The servers of ours on the Go, Java and TypeScript v2 SDKs, built here.
# shellcheck source=interop/sdk_checks.sh
source "$ROOT/interop/sdk_checks.sh"
# Real SDK clients and the MCP Inspector recorded by `mcp-fleet record`, then replayed.
# shellcheck source=interop/record.sh
source "$ROOT/interop/record.sh"

# ---------------------------------------------------------------- main

for tool in node npm python3 timeout; do
  command -v "$tool" >/dev/null || { say "interop: $tool not found"; say "interop: 0 passed, 1 failed"; exit 1; }
done
for _ in $(seq 30); do [ -x "$FLEET" ] && break; sleep 2; done
if [ ! -x "$FLEET" ]; then
  say "interop: no mcp-fleet binary at $FLEET (set MCP_FLEET)"
  say "interop: 0 passed, 1 failed"
  exit 1
fi
mkdir -p "$RESULTS"
say "interop: $("$FLEET" --version 2>/dev/null || echo "$FLEET"); server-everything $EVERYTHING_VERSION, mcp $MCP1_VERSION and $MCP2_VERSION, server-memory $MEMORY_VERSION, mcp-server-time $TIME_VERSION, go-sdk $GO_SDK_VERSION, mcp-go $MCP_GO_VERSION, java-sdk $JAVA_SDK_VERSION, @modelcontextprotocol/server $TS2_VERSION"

if any_selected everything-stdio everything-profile-stdio everything-http everything-http-auto \
    everything-profile-http everything-sse everything-profile-sse \
    everything-tasks-stdio everything-tasks-http; then
  if install_everything; then everything_checks; else record everything-install 0 "npm install failed"; fi
fi
PY1_CHECKS=(py1-stdio py1-http py1-profile-http py1-arguments-http py1-faults-http py1-http-auto py1-auth-http py1-sse py1-profile-sse py1-ws)
PY2_CHECKS=(py2-stdio py2-http py2-profile-http py2-arguments-http py2-faults-http py2-http-auto py2-dual-http py2-stateless-modern py2-listen py2-stdio-auto py2-sse py2-profile-sse)
if any_selected "${PY1_CHECKS[@]}"; then
  if install_venv "$WORK/venv" "$MCP1_VERSION"; then python_checks py1 "$WORK/venv"; else record py1-install 0 "pip install mcp==$MCP1_VERSION failed"; fi
fi
if any_selected "${PY2_CHECKS[@]}"; then
  if install_venv "$WORK/venv2" "$MCP2_VERSION"; then python_checks py2 "$WORK/venv2"; else record py2-install 0 "pip install mcp==$MCP2_VERSION failed"; fi
fi
app_checks
go_sdk_checks
mcp_go_checks
java_sdk_checks
ts2_checks
record_checks

cleanup
[ "$failed" -eq 0 ] || say "failed: ${failed_names[*]}"
say "interop: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
