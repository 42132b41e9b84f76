#!/usr/bin/env bash
# The faults table: what each fault a server can commit becomes in mcp-fleet's figures —
# the failure kinds counted (per transport and response mode) and the conformance
# findings. Every `serve --fault NAME` of the built-in server over Streamable HTTP (JSON
# answers and SSE answers), legacy HTTP+SSE, WebSocket and stdio, then the faults made
# from outside: a server that exits, one killed mid-run, garbage on stdout, a stalled
# server, answers over --max-message-size.
#
# Each run is 2 sessions of one client (a scenario that lists, calls `add` and `fail`,
# lists prompts and pings) with --timeout 2s, against servers on 127.0.0.1 with free
# ports; every server is killed on exit. A cell reads `kind×count`; `ok` means the two
# sessions completed with no failure. Takes a few minutes.
#
#   benches/faults.sh                 (builds the dist binary, or uses FLEET_BIN)
#   BIN=target/debug/mcp-fleet benches/faults.sh      (any built binary; figures are counts)
#
# Output: results/faults-<time>/ with every run's results folder and faults.md (the
# table committed in results/history/faults.md).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${BIN:-}" && -n "${FLEET_BIN:-}" ]]; then
  BIN=$FLEET_BIN
fi
if [[ -z "${BIN:-}" ]]; then
  cargo build --profile dist --locked --quiet -p mcp-fleet
  BIN=${FLEET_BIN:-${CARGO_TARGET_DIR:-target}/dist/mcp-fleet}
fi
out=results/faults-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
servers=()
cleanup() { for p in "${servers[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

cat >"$out/busy.toml" <<'EOF'
name = "faults"
[[scenario]]
name = "busy"
steps = [
  { op = "tools/list" },
  { op = "resources/list" },
  { op = "prompts/list" },
  { op = "tools/call", tool = "add", arguments = { a = 1, b = 2 } },
  { op = "tools/call", tool = "fail", arguments = {} },
  { op = "ping" },
]
EOF

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# serve ARGS… : start the built-in server on a free port; sets $port and $server.
serve() {
  port=$(free_port)
  "$BIN" serve --http "127.0.0.1:$port" "$@" 2>/dev/null &
  server=$!
  servers+=("$server")
  for _ in $(seq 100); do
    (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "the server on port $port did not start" >&2
  return 1
}

# fleet DIR ARGS… : one bounded run into DIR (exit codes are data here).
fleet() {
  local dir=$1
  shift
  timeout 60 "$BIN" run "$out/busy.toml" --clients 1 --sessions 2 --timeout 2s --seed 1 \
    --quiet --out "$dir" "$@" >/dev/null 2>"$dir.stderr" || true
}

# cell DIR : the failure kinds of a run, and its findings into DIR.codes.
cell() {
  python3 - "$1" <<'EOF'
import json, sys
d = sys.argv[1]
try:
    s = json.load(open(f"{d}/summary.json"))
except Exception:
    print("(no results)")
    sys.exit()
kinds = ", ".join(f"`{k}`×{n}" for k, n in sorted(s["failures"].items()))
failed = s["sessions"]["failed"]
print(kinds or ("ok" if failed == 0 else f"{failed} failed, none counted"))
open(f"{d}.codes", "w").write("".join(f["code"] + "\n" for f in s["findings"]))
EOF
}

codes() { cat "$@" 2>/dev/null | sort -u | sed '/^$/d; s/.*/`&`/' | paste -sd, - | sed 's/,/, /g'; }

table=$out/faults.md
{
  echo "| fault | http | http (SSE answers) | sse | ws | stdio | findings |"
  echo "|---|---|---|---|---|---|---|"
} >"$table"

# The names, from the error an unknown one gets (it lists them all).
faults=$({ "$BIN" serve --stdio --fault '?' 2>&1 || true; } |
  sed -n 's/.*\[possible values: \(.*\)\]/\1/p' | head -1 | tr -d ',')
[[ -n "$faults" ]] || { echo "cannot list the faults of $BIN" >&2; exit 1; }
for fault in $faults; do
  d=$out/$fault
  mkdir -p "$d"
  serve --fault "$fault"; json_port=$port; json_server=$server
  serve --fault "$fault" --sse-responses; sse_port=$port; sse_server=$server
  fleet "$d/http" --target "http://127.0.0.1:$json_port/mcp"
  fleet "$d/http-sse" --target "http://127.0.0.1:$sse_port/mcp"
  fleet "$d/sse" --target "http://127.0.0.1:$json_port/sse" --transport sse
  fleet "$d/ws" --target "ws://127.0.0.1:$json_port/ws"
  fleet "$d/stdio" --stdio "$BIN serve --stdio --fault $fault"
  kill "$json_server" "$sse_server" 2>/dev/null || true
  row="| \`$fault\`"
  for t in http http-sse sse ws stdio; do row+=" | $(cell "$d/$t")"; done
  echo "$row | $(codes "$d"/*.codes) |" >>"$table"
  echo "$fault done" >&2
done

# Faults made from outside the server: one row each, transport named in the row.
{
  echo
  echo "| fault | failure kinds | findings |"
  echo "|---|---|---|"
} >>"$table"
other() {
  local name=$1 dir=$out/other-$2
  echo "| $name | $(cell "$dir") | $(codes "$dir.codes") |" >>"$table"
}

fleet "$out/other-exits" --stdio "sh -c 'echo starting >&2; exit 3'"
other "stdio server exits at once" exits

fleet "$out/other-garbage" --stdio "sh -c 'echo not-json; echo [1,2]; sleep 30'"
other "stdio server prints garbage, never answers" garbage

fleet "$out/other-silent" --stdio "sh -c 'sleep 30'"
other "stdio server never answers (timeout 2s)" silent

serve --stall-at 0s --stall-for 10s
fleet "$out/other-stall" --target "http://127.0.0.1:$port/mcp"
kill "$server" 2>/dev/null || true
other "HTTP server stalls 10 s (timeout 2s)" stall

serve
fleet "$out/other-huge-http" --target "http://127.0.0.1:$port/mcp" --max-message-size 512
fleet "$out/other-huge-ws" --target "ws://127.0.0.1:$port/ws" --max-message-size 512
fleet "$out/other-huge-sse" --target "http://127.0.0.1:$port/sse" --transport sse --max-message-size 512
kill "$server" 2>/dev/null || true
fleet "$out/other-huge-stdio" --stdio "$BIN serve --stdio" --max-message-size 512
other "answers over --max-message-size 512 (http)" huge-http
other "answers over --max-message-size 512 (ws)" huge-ws
other "answers over --max-message-size 512 (sse)" huge-sse
other "answers over --max-message-size 512 (stdio)" huge-stdio

# Killed mid-run: 2 clients for 3 s, the server killed after 1 s.
serve
killed=$server
(sleep 1; kill -9 "$killed" 2>/dev/null || true) &
killer=$!
timeout 60 "$BIN" run "$out/busy.toml" --clients 2 --duration 3s --timeout 2s --seed 1 --quiet \
  --target "http://127.0.0.1:$port/mcp" --out "$out/other-killed" >/dev/null 2>&1 || true
wait "$killer" || true
other "HTTP server killed (SIGKILL) mid-run" killed

echo "$table"
cat "$table"
