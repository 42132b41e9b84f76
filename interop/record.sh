# shellcheck shell=bash
# Sourced by interop/run.sh: real MCP clients recorded by `mcp-fleet record`, and the
# recordings replayed. The clients (interop/clients/) are the official TypeScript SDK v1
# and v2, the Python SDK 1.x and 2.x and the MCP Inspector's CLI, each running one session
# the way its users write one and printing what it saw as one canonical JSON document.
# Per client × server × transport (servers: ours, `mcp-fleet serve`, and
# server-everything), check `record-CLIENT-SERVER-TRANSPORT`:
#   a. the client directly, twice: the two outputs are identical (out.direct.json);
#   b. the client through `mcp-fleet record` (HTTP: `--listen 127.0.0.1:0 --upstream URL
#      --sessions N`, the port read from its first stderr line; stdio: the server command
#      wrapped in `record --stdio --`): the same output byte for byte (out.proxied.json),
#      and a whole trace of N sessions;
#   c. `mcp-fleet replay TRACE` against the server: check_replay.py compares the methods
#      the client sent with the replay's phase samples, and its personas' clientInfo;
#   d. `mcp-fleet profile --from-trace TRACE`, then a 20-session run of that profile:
#      exit 0, no failed session.
# b–d are skipped (each said once) while the binary lacks `record`, `replay` or `profile`.
# Uses run.sh's helpers (selected, any_selected, record, start_server, stop_server,
# free_port, say) and its ROOT, WORK, RESULTS, FLEET, RUN_LIMIT, REQ_TIMEOUT, LOOPBACK, and
# stacks.sh's EVERYTHING, install_everything, install_venv, MCP1_VERSION, MCP2_VERSION.

TS1_CLIENT_VERSION="1.32.2"      # @modelcontextprotocol/sdk (npm): benches/package.json's pin
TS2_CLIENT_VERSION="2.4.0"       # @modelcontextprotocol/client (npm): the v2 release of TS2_VERSION
INSPECTOR_VERSION="2.12.0"       # @modelcontextprotocol/inspector (npm), run as `mcp-inspector --cli`
TS1_CLIENT_DIR="$WORK/npm-ts1"
TS2_CLIENT_DIR="$WORK/npm-ts2-client"
INSPECTOR_DIR="$WORK/npm-inspector"
CLIENTS_DIR="$ROOT/interop/clients"
CHECK_REPLAY="$ROOT/interop/check_replay.py"
RECORD_CLIENTS=(ts1 ts2 py1 py2 inspector)
# A whole client run (the Inspector's is 7 CLI calls); each client also bounds itself (30 s).
CLIENT_LIMIT=120
PROFILE_SESSIONS=20

# install_npm_pin DIR PACKAGE VERSION: npm install into DIR unless that version is there.
install_npm_pin() {
  local dir="$1" pkg="$2" version="$3" json got=""
  json="$dir/node_modules/$pkg/package.json"
  [ -f "$json" ] && got="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$json")"
  [ "$got" = "$version" ] && return 0
  say "install: $pkg@$version (npm, $dir)"
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$pkg@$version" >"$dir.install.log" 2>&1 ||
    { tail -20 "$dir.install.log"; return 1; }
}

install_client() { # CLIENT
  case $1 in
    ts1) install_npm_pin "$TS1_CLIENT_DIR" @modelcontextprotocol/sdk "$TS1_CLIENT_VERSION" ;;
    ts2) install_npm_pin "$TS2_CLIENT_DIR" @modelcontextprotocol/client "$TS2_CLIENT_VERSION" ;;
    # Its package asks for Node >= 22.19; its CLI mode runs on Node 20 (checked here).
    inspector) install_npm_pin "$INSPECTOR_DIR" @modelcontextprotocol/inspector "$INSPECTOR_VERSION" ;;
    py1) install_venv "$WORK/venv" "$MCP1_VERSION" ;;
    py2) install_venv "$WORK/venv2" "$MCP2_VERSION" ;;
  esac
}

client_version() { # CLIENT
  case $1 in
    ts1) echo "@modelcontextprotocol/sdk $TS1_CLIENT_VERSION" ;;
    ts2) echo "@modelcontextprotocol/client $TS2_CLIENT_VERSION" ;;
    inspector) echo "@modelcontextprotocol/inspector $INSPECTOR_VERSION" ;;
    py1) echo "mcp $MCP1_VERSION" ;;
    py2) echo "mcp $MCP2_VERSION" ;;
  esac
}

# The transports each client's SDK offers (WebSocket: TS v1 and Python 1.x only).
client_transports() { # CLIENT
  case $1 in
    ts1 | py1) echo "stdio http sse ws" ;;
    *) echo "stdio http sse" ;;
  esac
}

client_argv() { # CLIENT → CLIENT_ARGV
  case $1 in
    ts1) CLIENT_ARGV=(env "MCP_TS_MODULES=$TS1_CLIENT_DIR/node_modules" node "$CLIENTS_DIR/ts_client.mjs") ;;
    ts2) CLIENT_ARGV=(env "MCP_TS_MODULES=$TS2_CLIENT_DIR/node_modules" node "$CLIENTS_DIR/ts_client.mjs") ;;
    py1) CLIENT_ARGV=("$WORK/venv/bin/python" "$CLIENTS_DIR/py_client.py") ;;
    py2) CLIENT_ARGV=("$WORK/venv2/bin/python" "$CLIENTS_DIR/py_client.py") ;;
    inspector) CLIENT_ARGV=(env "INSPECTOR=$INSPECTOR_DIR/node_modules/.bin/mcp-inspector"
      "INSPECTOR_HOME=$INSPECTOR_DIR/inspector-home" python3 "$CLIENTS_DIR/inspector_client.py") ;;
  esac
}

# run_client OUT LOG ARGS…: the client (CLIENT_ARGV) with its transport and target, under
# reap.py, which ends whatever the client leaves running (a server whose wrapper it killed).
run_client() {
  local out="$1" log="$2"; shift 2
  timeout --kill-after=5 "$CLIENT_LIMIT" python3 "$ROOT/interop/reap.py" "${CLIENT_ARGV[@]}" "$@" >"$out" 2>"$log" </dev/null
}

# What a client's output says, for the PASS line.
saw_line() { # OUT.json
  python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
parts = [str(d.get("protocol_version")), f"{len(d.get('tools', []))} tools",
         f"{len(d.get('resources', []))} resources", f"{len(d.get('prompts', []))} prompts"]
if d.get("sessions", 1) != 1:
    parts.append(f"{d['sessions']} sessions")
print(", ".join(parts))
EOF
}

# The port in the recorder's first stderr line, `mcp-fleet record: listening on 127.0.0.1:PORT`.
recorder_port() { # LOG PID
  local _ line
  for _ in $(seq 100); do
    line="$(head -1 "$1" 2>/dev/null || true)"
    if [[ "$line" =~ listening\ on\ 127\.0\.0\.1:([0-9]+) ]]; then echo "${BASH_REMATCH[1]}"; return 0; fi
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# The recorder ends by itself once its N sessions closed; give it 10 s, then SIGTERM
# (it writes the trace's end line then too). Sets RECORDER_RC (0 also when it exited
# 143 = 128 + SIGTERM, mcp-fleet's code for "stopped by signal 15", after ours) and
# RECORDER_NOTE.
end_recorder() { # PID SESSIONS
  local pid="$1" _ kept=() p stopped=0
  RECORDER_RC=0 RECORDER_NOTE=""
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    stopped=1
    RECORDER_NOTE="the recorder was still running 10 s after $2 session(s) closed: stopped by SIGTERM"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || RECORDER_RC=$?
  [ "$stopped" = 1 ] && [ "$RECORDER_RC" = 143 ] && RECORDER_RC=0
  for p in "${SERVER_PIDS[@]:-}"; do [ "$p" = "$pid" ] || kept+=("$p"); done
  SERVER_PIDS=("${kept[@]:-}")
}

# record_check NAME CLIENT TRANSPORT URL [-- SERVER CMD…]: steps a–d of one check. For
# stdio, URL is `-` and the server command follows `--`.
record_check() {
  local name="$1" client="$2" kind="$3" url="$4"; shift 4
  [ "${1:-}" = -- ] && shift
  local server=("$@") dir="$RESULTS/$name" target=() i msg
  rm -rf "$dir"
  mkdir -p "$dir"
  client_argv "$client"
  if [ "$kind" = stdio ]; then target=(-- "${server[@]}"); else target=("$url"); fi

  # a. Directly, twice: what the client saw must not change between runs.
  for i in 1 2; do
    if ! run_client "$dir/out.direct$i.json" "$dir/client.direct$i.log" "$kind" "${target[@]}"; then
      record "$name" 0 "direct run $i failed: $(tail -3 "$dir/client.direct$i.log" | tr '\n' ' ')"
      return 0
    fi
  done
  if ! cmp -s "$dir/out.direct1.json" "$dir/out.direct2.json"; then
    record "$name" 0 "two direct runs printed different outputs: $(diff "$dir/out.direct1.json" "$dir/out.direct2.json" | head -6 | tr '\n' ' ')"
    return 0
  fi
  cp "$dir/out.direct1.json" "$dir/out.direct.json"
  local seen sessions
  seen="direct ×2 identical ($(saw_line "$dir/out.direct.json"))"
  sessions="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("sessions", 1))' "$dir/out.direct.json")"
  if [ "$HAVE_RECORD" != 1 ]; then
    record "$name" 1 "$seen; b–d skipped: no record command"
    return 0
  fi

  # b. Through the recorder: the same bytes out, a whole trace of the sessions.
  local rpid port purl notes=()
  if [ "$kind" = stdio ]; then
    # Each spawn of the server command is one recorder with its own trace (the Inspector
    # starts the server once per CLI call): trace.PID.jsonl.
    # shellcheck disable=SC2016  # expanded by the inner bash
    local wrapped=(bash -c 'exec "$0" record --trace "$1/trace.$$.jsonl" --stdio -- "${@:2}"' "$FLEET" "$dir" "${server[@]}")
    if ! run_client "$dir/out.proxied.json" "$dir/client.proxied.log" stdio -- "${wrapped[@]}"; then
      record "$name" 0 "$seen; through record --stdio the client failed: $(tail -3 "$dir/client.proxied.log" | tr '\n' ' ')"
      return 0
    fi
  else
    "$FLEET" record --listen 127.0.0.1:0 --upstream "$url" --trace "$dir/trace.jsonl" --sessions "$sessions" \
      >"$dir/record.out" 2>"$dir/record.log" </dev/null &
    rpid=$!
    SERVER_PIDS+=("$rpid")
    if ! port="$(recorder_port "$dir/record.log" "$rpid")"; then
      end_recorder "$rpid" "$sessions"
      record "$name" 0 "$seen; record did not say where it listens: $(head -3 "$dir/record.log" | tr '\n' ' ')"
      return 0
    fi
    # The client's own URL with the recorder's port: same scheme and path.
    purl="$(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(netloc="127.0.0.1:" + sys.argv[2])))' "$url" "$port")"
    local crc=0
    run_client "$dir/out.proxied.json" "$dir/client.proxied.log" "$kind" "$purl" || crc=$?
    end_recorder "$rpid" "$sessions"
    [ -n "$RECORDER_NOTE" ] && notes+=("$RECORDER_NOTE")
    if [ "$crc" -ne 0 ]; then
      record "$name" 0 "$seen; through record the client failed ($crc): $(tail -3 "$dir/client.proxied.log" | tr '\n' ' ')"
      return 0
    fi
    if [ "$RECORDER_RC" -ne 0 ]; then
      record "$name" 0 "$seen; record exited $RECORDER_RC: $(tail -3 "$dir/record.log" | tr '\n' ' ')"
      return 0
    fi
  fi
  if ! cmp -s "$dir/out.direct.json" "$dir/out.proxied.json"; then
    record "$name" 0 "$seen; through record the output differs: $(diff "$dir/out.direct.json" "$dir/out.proxied.json" | head -6 | tr '\n' ' ')"
    return 0
  fi
  local traces=("$dir"/trace*.jsonl)
  if [ ! -f "${traces[0]}" ]; then
    record "$name" 0 "$seen; proxied identical, but no trace was written"
    return 0
  fi
  # mcp 1.x's stdio close, when a server request arrives meanwhile (server-everything's
  # roots/list), leaves its context manager by an error and asyncio SIGKILLs the server
  # process, here the recorder: its trace has no end line. Replayed with --partial.
  local partial=()
  if [ "$kind" = stdio ] && grep -q 'known SDK quirk on close' "$dir/client.proxied.log"; then
    partial=(--partial)
    notes+=("the client SIGKILLed the recorder on close (mcp 1.x stdio quirk): trace read with --partial")
  fi
  if ! msg="$(python3 "$CHECK_REPLAY" trace "${traces[@]}" --sessions "$sessions" ${partial[@]:+--partial-ok} 2>&1)"; then
    record "$name" 0 "$seen; proxied identical; trace: $msg"
    return 0
  fi
  local said="$seen; proxied identical, $msg"
  if [ "$HAVE_REPLAY" != 1 ] && [ "$HAVE_PROFILE" != 1 ]; then
    record "$name" 1 "$said; c–d skipped: no replay or profile command"
    return 0
  fi

  # c. Replay each trace against the server.
  local to=() t n=0 rc best="" most=-1 count
  if [ "$kind" = stdio ]; then to=(--stdio "${server[*]}"); else to=(--target "$url"); fi
  if [ "$HAVE_REPLAY" = 1 ]; then
    for t in "${traces[@]}"; do
      n=$((n + 1))
      rc=0
      timeout --kill-after=10 "$RUN_LIMIT" "$FLEET" replay "$t" "${partial[@]}" "${to[@]}" --out "$dir/replay$n" \
        >"$dir/replay$n.log" 2>&1 </dev/null || rc=$?
      if [ "$rc" -ne 0 ]; then
        record "$name" 0 "$said; replay of $(basename "$t") exited $rc: $(tail -3 "$dir/replay$n.log" | tr '\n' ' ')"
        return 0
      fi
      if ! msg="$(python3 "$CHECK_REPLAY" replay "$t" "$dir/replay$n" 2>&1)"; then
        record "$name" 0 "$said; replay of $(basename "$t"): $msg"
        return 0
      fi
    done
    [ "$n" -gt 1 ] && msg="$n traces replayed as recorded"
    said="$said; $msg"
  else
    notes+=("c skipped: no replay command")
  fi

  # d. A profile from the trace with the most requests, run for 20 sessions.
  if [ "$HAVE_PROFILE" = 1 ]; then
    for t in "${traces[@]}"; do
      count="$(grep -cE '"from": ?"client"' "$t" || true)"
      if [ "$count" -gt "$most" ]; then most="$count" best="$t"; fi
    done
    rc=0
    timeout --kill-after=10 "$RUN_LIMIT" "$FLEET" profile --from-trace "$best" "${partial[@]}" --out "$dir/profile.toml" \
      >"$dir/profile.log" 2>&1 </dev/null || rc=$?
    if [ "$rc" -ne 0 ]; then
      record "$name" 0 "$said; profile --from-trace exited $rc: $(tail -3 "$dir/profile.log" | tr '\n' ' ')"
      return 0
    fi
    local clients=()
    [ "$kind" = stdio ] && clients=(--clients 4)  # a process a session
    timeout --kill-after=10 "$RUN_LIMIT" "$FLEET" run "$dir/profile.toml" "${to[@]}" --sessions "$PROFILE_SESSIONS" \
      "${clients[@]}" --timeout "$REQ_TIMEOUT" --quiet --out "$dir/run" >"$dir/run.log" 2>&1 </dev/null || rc=$?
    if [ "$rc" -ne 0 ]; then
      record "$name" 0 "$said; run of the profile from the trace exited $rc: $(tail -3 "$dir/run.log" | tr '\n' ' ')"
      return 0
    fi
    if ! msg="$(python3 "$CHECK_REPLAY" run "$dir/run" --sessions "$PROFILE_SESSIONS" 2>&1)"; then
      record "$name" 0 "$said; $msg"
      return 0
    fi
    said="$said; $msg"
  else
    notes+=("d skipped: no profile command")
  fi
  record "$name" 1 "$said${notes[*]:+; ${notes[*]}}"
}

# The checks of one server and transport, for every client that offers the transport:
# record_checks_for SERVER TRANSPORT URL [-- CMD…]
record_checks_for() {
  local server="$1" kind="$2" url="$3" client; shift 3
  for client in "${RECORD_CLIENTS[@]}"; do
    [ -n "${CLIENT_READY[$client]:-}" ] || continue
    [[ " $(client_transports "$client") " == *" $kind "* ]] || continue
    selected "record-$client-$server-$kind" || continue
    record_check "record-$client-$server-$kind" "$client" "$kind" "$url" "$@"
  done
}

record_check_names() { # SERVER TRANSPORTS… → the check names
  local server="$1" client kind; shift
  for client in "${RECORD_CLIENTS[@]}"; do
    for kind in "$@"; do
      [[ " $(client_transports "$client") " == *" $kind "* ]] && echo "record-$client-$server-$kind"
    done
  done
  return 0
}

record_checks() {
  local ref_names everything_names all_names=() client port pid
  mapfile -t ref_names < <(record_check_names ref stdio http sse ws)
  mapfile -t everything_names < <(record_check_names everything stdio http sse)
  all_names=("${ref_names[@]}" "${everything_names[@]}")
  any_selected "${all_names[@]}" || return 0

  HAVE_RECORD=0 HAVE_REPLAY=0 HAVE_PROFILE=0
  "$FLEET" record --help >/dev/null 2>&1 && HAVE_RECORD=1
  "$FLEET" replay --help >/dev/null 2>&1 && HAVE_REPLAY=1
  "$FLEET" profile --help >/dev/null 2>&1 && HAVE_PROFILE=1
  if [ "$HAVE_RECORD" != 1 ]; then
    say "record: mcp-fleet has no record command: the clients run directly only (steps b–d skipped)"
  else
    [ "$HAVE_REPLAY" = 1 ] || say "record: mcp-fleet has no replay command (step c skipped)"
    [ "$HAVE_PROFILE" = 1 ] || say "record: mcp-fleet has no profile command (step d skipped)"
  fi

  declare -gA CLIENT_READY=()
  local versions=()
  for client in "${RECORD_CLIENTS[@]}"; do
    any_selected $(printf '%s\n' "${all_names[@]}" | grep "^record-$client-") || continue
    if install_client "$client"; then
      CLIENT_READY[$client]=1
      versions+=("$client: $(client_version "$client")")
    else
      record "record-$client-install" 0 "install of $(client_version "$client") failed"
    fi
  done
  [ "${#versions[@]}" -eq 0 ] || say "record: clients $(IFS=','; echo "${versions[*]}" | sed 's/,/, /g')"

  # Our reference server: stdio, and every HTTP transport on one port.
  if any_selected "${ref_names[@]}"; then
    record_checks_for ref stdio - -- "$FLEET" serve --stdio
    if any_selected $(printf '%s\n' "${ref_names[@]}" | grep -v -- '-stdio$'); then
      port="$(free_port)"
      if start_server record-ref "$port" "$FLEET" serve --http "127.0.0.1:$port"; then
        pid=$SERVER_PID
        record_checks_for ref http "http://127.0.0.1:$port/mcp"
        record_checks_for ref sse "http://127.0.0.1:$port/sse"
        record_checks_for ref ws "ws://127.0.0.1:$port/ws"
        stop_server "$pid"
      else
        server_failed $(printf '%s\n' "${ref_names[@]}" | grep -v -- '-stdio$')
      fi
    fi
  fi

  # server-everything: stdio, Streamable HTTP (/mcp) and legacy SSE (/sse), one server each.
  if any_selected "${everything_names[@]}"; then
    if ! install_everything; then
      record record-everything-install 0 "npm install of server-everything failed"
      return 0
    fi
    record_checks_for everything stdio - -- node "$EVERYTHING" stdio
    if any_selected $(printf '%s\n' "${everything_names[@]}" | grep -- '-http$'); then
      port="$(free_port)"
      if start_server record-everything-http "$port" env PORT="$port" node --require "$LOOPBACK" "$EVERYTHING" streamableHttp; then
        pid=$SERVER_PID
        record_checks_for everything http "http://127.0.0.1:$port/mcp"
        stop_server "$pid"
      else
        server_failed $(printf '%s\n' "${everything_names[@]}" | grep -- '-http$')
      fi
    fi
    if any_selected $(printf '%s\n' "${everything_names[@]}" | grep -- '-sse$'); then
      port="$(free_port)"
      if start_server record-everything-sse "$port" env PORT="$port" node --require "$LOOPBACK" "$EVERYTHING" sse; then
        pid=$SERVER_PID
        record_checks_for everything sse "http://127.0.0.1:$port/sse"
        stop_server "$pid"
      else
        server_failed $(printf '%s\n' "${everything_names[@]}" | grep -- '-sse$')
      fi
    fi
  fi
  return 0
}
