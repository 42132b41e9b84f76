#!/usr/bin/env bash
# Handshake-churn benchmark against the built-in reference server over Streamable HTTP.
#
# Each session: TCP connect, initialize, notifications/initialized, DELETE, close.
# The server and the generator run as separate processes pinned to separate cores, and
# the script reports sessions/s plus the CPU time each side spent per session (from
# /proc, user + system). Loopback only, bounded by --duration; it stops by itself.
#
#   benches/handshake.sh [DURATION] [CLIENTS]      (defaults: 10s, 32)
#
# Measures this tree's `dist` build (target/dist/mcp-fleet), or FLEET_BIN when set.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10s}
clients=${2:-32}

if [[ -z ${FLEET_BIN:-} ]]; then
  cargo build --profile dist --locked --quiet -p mcp-fleet
fi
bin=${FLEET_BIN:-${CARGO_TARGET_DIR:-target}/dist/mcp-fleet}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
out=$(mktemp -d)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

taskset -c 1 "$bin" serve --http "127.0.0.1:$port" 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
  sleep 0.1
done
server_before=$(cpu_ticks $server)

# Time the generator (user + system CPU of the whole process).
/usr/bin/time -f '%U %S' -o "$out/time" \
  taskset -c 0 "$bin" run profiles/handshake.toml --target "http://127.0.0.1:$port/mcp" \
  --clients "$clients" --duration "$duration" --out "$out/run" --quiet >/dev/null

server_after=$(cpu_ticks $server)
python3 - "$out" "$server_before" "$server_after" "$hz" "$clients" <<'PY'
import json, sys
out, before, after, hz, clients = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
s = json.load(open(f"{out}/run/summary.json"))
user, system = map(float, open(f"{out}/time").read().split())
n = s["sessions"]["completed"] + s["sessions"]["failed"]
gen_us = (user + system) / n * 1e6
srv_us = (after - before) / hz / n * 1e6
p = s["phases"]
print(f"clients {clients}, {s['run']['duration_s']:.1f}s: {n} sessions, {s['sessions']['failed']} failed, "
      f"{s['sessions']['rate_per_s']:.0f} sessions/s")
print(f"generator CPU {gen_us:.1f} µs/session (user {user:.2f}s + sys {system:.2f}s); "
      f"server CPU {srv_us:.1f} µs/session")
for ph in ["connect", "initialize", "initialized", "close", "session"]:
    q = p[ph]
    print(f"  {ph:<12} p50 {q['p50_us']:>6} µs  p99 {q['p99_us']:>6} µs  max {q['max_us']:>7} µs")
PY
