#!/usr/bin/env bash
# Held `subscriptions/listen` streams (2026-07-28) at scale: LISTENERS modern sessions over
# Streamable HTTP each hold one listen to the tool list (nothing else: a chat host between
# turns; the changes are heard, not re-fetched), while the reference server (its own process, `serve --change-every`) changes its
# tool list every CHANGE_EVERY and fans each change out to all of them.
#
#   benches/listen.sh                  # LISTENERS=10000 CHANGE_EVERY=5s HOLD=40
#   FLEET_BIN=target/release/mcp-fleet LISTENERS=1500 FIRST_HOLD=5 HOLD=4 CHANGE_EVERY=1s benches/listen.sh
#                                      (CI's short version, .ci/run)
#
# The sessions ramp to 1,000 and hold, then to LISTENERS and hold HOLD seconds; both
# processes' RSS is sampled at the end of each plateau. Printed (and written to
# report.md): memory per listening session on each side (marginal: (RSS at LISTENERS −
# RSS at 1,000) ÷ the sessions added), the `fanout` phase (a change's way from the server
# to each listener, one sample per listener per change: p50, p99, max), listeners that
# missed a change, failed sessions. Loopback only; generator and server pinned to cores
# GEN_CORE / SERVER_CORE (benches/lib.sh); every process is stopped on exit.
# PEERS="builtin ts-v2 py2" adds, after that, PEER_LISTENERS (default 1,000: under the
# TypeScript SDK v2's and Python SDK 2.x's default cap of 1,024 listens) on each of those
# servers side by side, changes made by two list-changed storms of 5 (`[load] events`,
# through each server's `notify_list_changed` tool; interop/run.sh installs the SDKs, and
# its listen checks' servers are used): listens opened, changes heard, and the server's RSS
# per listen (its RSS while holding them − its RSS before, ÷ listeners). Peers do not stamp
# their changes, so they get no fan-out time.
# Output: results/listen-<time>/ (report.md, and row.json with the same figures).
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

n=${LISTENERS:-10000}
every=${CHANGE_EVERY:-5s}
hold=${HOLD:-40}
first_hold=${FIRST_HOLD:-15}
((n > 1000)) || { echo "LISTENERS must be above 1000 (the first plateau)" >&2; exit 2; }
# MAIN=0: only the peers (PEERS) are measured.
# A listen holds one connection per session on each side (a refetch would open a second:
# these listeners let the changes pass, see the profile).
need=$((n + 500))
(($(ulimit -Hn) >= need)) || { echo "open-file limit $(ulimit -Hn) < $need" >&2; exit 2; }
ulimit -n "$(ulimit -Hn)"

rss() { awk '/VmRSS/{print $2}' "/proc/$1/status"; }
out=results/listen-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
build_fleet
if [[ ${MAIN:-1} == 1 ]]; then
start_server --change-every "$every"
echo "results in $out; $(nproc) cores; load $(load_avg)" >&2

cat >"$out/profile.toml" <<EOF
name = "listen-$n"
[target]
timeout = "30s"
[load]
grace = "20s"
[[persona]]
name = "listener"
transport = "http"
protocol_version = "2026-07-28"
shape = "long-lived"
listen = { lists = ["tools"] }
# Heard, not re-fetched: the figure is the fan-out alone (a refetch per change would add
# LISTENERS tools/list at once, a herd of its own).
list_changed = "ignore"
scenarios = ["hold"]
[[scenario]]
name = "hold"
steps = []
EOF

first_ramp=5
ramp=$((n / 1000 + 5))
taskset -c "$gen_core" "$bin" run "$out/profile.toml" --target "$url" \
  --ramp "1000:${first_ramp}s,1000:${first_hold}s,$n:${ramp}s,$n:${hold}s" \
  --out "$out/run" --quiet >"$out/run.log" 2>&1 &
gen=$!
pids+=("$gen")

sleep $((first_ramp + first_hold - 3))
gen_1k=$(rss "$gen")
srv_1k=$(rss "$server_pid")
sleep $((3 + ramp + hold - 5))
gen_n=$(rss "$gen")
srv_n=$(rss "$server_pid")
conns=$(ss -Htn state established "( sport = :$port )" | wc -l)
wait "$gen" || true

python3 - "$out/run/summary.json" "$n" "$gen_1k" "$srv_1k" "$gen_n" "$srv_n" "$conns" "$every" <<'PY' | tee "$out/report.md"
import json, sys
path, n, g1, s1, gn, sn, conns, every = sys.argv[1:]
n, g1, s1, gn, sn = int(n), int(g1), int(s1), int(gn), int(sn)
s = json.load(open(path))
f = s["phases"].get("fanout", {})
c = s.get("counters", {})
added = n - 1000
ms = lambda k: f.get(k, 0) / 1000
row = {"listeners": n, "server_connections": int(conns), "failed": s["sessions"]["failed"],
       "listen_opened": c.get("listen_opened", 0), "heard": c.get("listen_notifications", 0),
       "missed": c.get("listen_changes_missed", 0), "fanout_count": f.get("count", 0),
       "fanout_p50_ms": ms("p50_us"), "fanout_p99_ms": ms("p99_us"), "fanout_max_ms": ms("max_us"),
       "generator_kib_per_session": (gn - g1) / added, "server_kib_per_session": (sn - s1) / added,
       "generator_rss_mib": gn / 1024, "server_rss_mib": sn / 1024, "change_every": every}
json.dump(row, open(path.replace("run/summary.json", "row.json"), "w"))
print(f"| listeners | server connections | failed | listens opened | changes heard | missed | fanout p50 | p99 | max | generator per session | server per session | generator / server RSS at {n} |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
print(f"| {n:,} | {int(conns):,} | {s['sessions']['failed']} | {c.get('listen_opened', 0):,} | {c.get('listen_notifications', 0):,} "
      f"| {c.get('listen_changes_missed', 0)} | {ms('p50_us'):.1f} ms | {ms('p99_us'):.1f} ms | {ms('max_us'):.1f} ms "
      f"| {(gn - g1) / added:.1f} KiB | {(sn - s1) / added:.1f} KiB | {gn / 1024:.1f} / {sn / 1024:.1f} MiB |")
print(f"\n(the tool list changed every {every}; RSS marginal from 1,000 to {n:,} held listens)")
PY
fi

[[ -n ${PEERS:-} ]] || exit 0
m=${PEER_LISTENERS:-1000}
peer_hold=${PEER_HOLD:-20}
root=$(pwd)
cat >"$out/peer-profile.toml" <<EOF
name = "listen-peers"
[target]
timeout = "30s"
[load]
grace = "10s"
events = [{ at = "40%", storm = "list-changed", count = 5 }, { at = "80%", storm = "list-changed", count = 5 }]
[[persona]]
name = "listener"
transport = "http"
protocol_version = "2026-07-28"
shape = "long-lived"
listen = { lists = ["tools"] }
list_changed = "ignore"
scenarios = ["hold"]
[[scenario]]
name = "hold"
steps = []
EOF
echo | tee -a "$out/report.md"
echo "| server | listeners | failed | listens opened | changes made | changes heard | server RSS before → holding | per listen |" | tee -a "$out/report.md"
echo "|---|---|---|---|---|---|---|---|" | tee -a "$out/report.md"
for peer in $PEERS; do
  case $peer in
    builtin) start_command "$out/$peer.server.log" "$bin" serve --http 127.0.0.1:PORT ;;
    ts-v2) start_command "$out/$peer.server.log" env "MCP_TS2_MODULES=$root/target/interop/npm-ts2/node_modules" \
      node interop/ts-v2/server.mjs http PORT --change-tool ;;
    py2) start_command "$out/$peer.server.log" target/interop/venv2/bin/python interop/python_server.py \
      streamable-http PORT --change-tool ;;
    *) echo "unknown peer $peer (builtin, ts-v2, py2)" >&2; exit 2 ;;
  esac
  sleep 2
  before=$(rss "$server_pid")
  taskset -c "$gen_core" "$bin" run "$out/peer-profile.toml" --target "$url" \
    --ramp "$m:5s,$m:${peer_hold}s" --out "$out/$peer" --quiet >"$out/$peer.log" 2>&1 &
  gen=$!
  pids+=("$gen")
  sleep $((5 + peer_hold - 3))
  holding=$(rss "$server_pid")
  wait "$gen" || true
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  python3 - "$out/$peer/summary.json" "$peer" "$m" "$before" "$holding" <<'PY' | tee -a "$out/report.md"
import json, sys
path, peer, m, before, holding = sys.argv[1:]
m, before, holding = int(m), int(before), int(holding)
s = json.load(open(path))
c = s.get("counters", {})
print(f"| {peer} | {m:,} | {s['sessions']['failed']} | {c.get('listen_opened', 0):,} | {c.get('changes_triggered', 0)} "
      f"| {c.get('listen_notifications', 0):,} | {before / 1024:.1f} → {holding / 1024:.1f} MiB | {(holding - before) / m:.1f} KiB |")
PY
done
