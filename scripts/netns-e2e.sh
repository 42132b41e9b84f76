#!/usr/bin/env bash
# End to end on one machine, network namespaces standing for hosts: the built-in server
# (`mcp-fleet serve --http`) in one namespace, N shards in N others and one unsharded
# run in another, every namespace on one bridge (in a namespace of its own: the host's
# network is not touched), with private addresses that exist only inside them. The N
# shards run with one `--start-at`, are merged, and the merged summary.json is compared
# with the unsharded run's at the same total load (same profile, same seed): session,
# phase, persona, scenario and tool counts must be identical, and the shards' start skew
# under 50 ms. With `prometheus` on PATH (or --prometheus PATH) the shards also push to
# one in the server's namespace (--push prometheus-rw=…), and every panel query of the
# Grafana dashboard must read the merged figures there (deploy/grafana/check_panels.py);
# MCP_FLEET_REQUIRE_PROMETHEUS=1 makes a missing one an error. Bounded in time; every
# namespace and process it made is removed on any exit. Needs root, iproute2 (`ip
# netns`) and python3.
#
#   scripts/netns-e2e.sh [--bin PATH] [--shards N] [--rate R] [--duration D] [--out DIR]
#                        [--unsharded-only] [--prometheus PATH]
#
# --unsharded-only checks the network part alone (namespaces, bridge, the server reached
# from another namespace, an unsharded run across them). Exit 0: all checks passed.
set -euo pipefail

bin=${MCP_FLEET:-target/release/mcp-fleet}
shards=2
rate=200
duration=5
out=""
unsharded_only=false
prometheus=$(command -v prometheus || true)
margin=3          # seconds from now to --start-at: time for every shard to get ready
step_timeout=120  # no single step may take longer
max_skew_ms=50

die() { printf 'netns-e2e: %s\n' "$1" >&2; [ -z "${2:-}" ] || printf 'fix: %s\n' "$2" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=${2:?}; shift 2 ;;
    --shards) shards=${2:?}; shift 2 ;;
    --rate) rate=${2:?}; shift 2 ;;
    --duration) duration=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --unsharded-only) unsharded_only=true; shift ;;
    --prometheus) prometheus=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1" "see --help" ;;
  esac
done
for v in shards rate duration; do
  case "${!v}" in ''|*[!0-9]*|0) die "--$v ${!v}: not a positive whole number" ;; esac
done
[ "$shards" -le 200 ] || die "--shards $shards: at most 200 (one address each)"
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)" "run it as root, e.g. sudo $0"
command -v ip >/dev/null || die "no ip command" "apt-get install iproute2"
[ -x "$bin" ] || die "no mcp-fleet program at $bin" "cargo build --release, or --bin PATH"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
[ -n "$out" ] || out=$(mktemp -d /tmp/netns-e2e.XXXXXX)
mkdir -p "$out/logs"

# Names unique to this run, so two runs (or a crashed earlier one) do not collide.
tag="mfe$$"
hub="$tag-hub"
namespaces=()
pids=()
cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The hosts: a bridge in its own namespace, and one veth pair from it to each host.
# 10.250.12.0/24 exists only on this bridge, inside these namespaces.
net=10.250.12
ip netns add "$hub"; namespaces+=("$hub")
ip -n "$hub" link add br0 type bridge
ip -n "$hub" link set br0 up
ip -n "$hub" link set lo up
add_host() { # NAME ADDRESS
  local ns="$tag-$1"
  ip netns add "$ns"; namespaces+=("$ns")
  ip -n "$hub" link add "v-$1" type veth peer name eth0 netns "$ns"
  ip -n "$hub" link set "v-$1" master br0 up
  ip -n "$ns" addr add "$2/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
}
add_host srv "$net.1"
add_host one "$net.2"
for ((i = 0; i < shards; i++)); do add_host "s$i" "$net.$((10 + i))"; done
in_ns() { local ns="$tag-$1"; shift; timeout "$step_timeout" ip netns exec "$ns" "$@"; }

# The server, on a port its kernel picks, in its own namespace.
ip netns exec "$tag-srv" "$bin" serve --http "$net.1:0" >"$out/logs/server.out" 2>"$out/logs/server.err" &
pids+=($!)
url=""
for _ in $(seq 100); do
  url=$(cat "$out/logs/server.out" "$out/logs/server.err" 2>/dev/null | grep -o 'http://[0-9.:]*/mcp' | head -1 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || die "the server did not start: $(cat "$out/logs/server.err")"
echo "netns-e2e: server at $url in $tag-srv; $shards shard hosts, one unsharded host"

# A Prometheus beside the server, on a port its kernel picks (read from its log), that
# the shards push to.
push_args=()
prom_url=""
if [ -n "$prometheus" ] && [ -x "$prometheus" ] && ! $unsharded_only; then
  mkdir -p "$out/prometheus"
  printf 'global:\n  scrape_interval: 1m\n' >"$out/prometheus/prometheus.yml"
  # 2.x needs native histograms switched on; 3.x calls the flag a no-op.
  ip netns exec "$tag-srv" "$prometheus" --config.file="$out/prometheus/prometheus.yml" \
    --storage.tsdb.path="$out/prometheus/data" --web.listen-address="$net.1:0" \
    --web.enable-remote-write-receiver --enable-feature=native-histograms \
    >"$out/logs/prometheus.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    prom_url=$(grep -o 'msg="Listening on".*address=[0-9.:]*' "$out/logs/prometheus.log" 2>/dev/null \
      | grep -o '[0-9.]*:[0-9]*$' | head -1 || true)
    [ -n "$prom_url" ] && break
    sleep 0.1
  done
  [ -n "$prom_url" ] || die "prometheus did not start: $(tail -3 "$out/logs/prometheus.log")"
  prom_url="http://$prom_url"
  push_args=(--push "prometheus-rw=$prom_url/api/v1/write" --push-every 1s --run-label "netns-$tag")
  echo "netns-e2e: prometheus at $prom_url in $tag-srv; the shards push to it"
elif [ -n "${MCP_FLEET_REQUIRE_PROMETHEUS:-}" ] && ! $unsharded_only; then
  die "no prometheus program (MCP_FLEET_REQUIRE_PROMETHEUS is set)" "apt-get install prometheus, or --prometheus PATH"
fi

# The profile: an open model (a fixed number of arrivals, rate × duration), two personas
# and two scenarios chosen by the seed, so the counts are the same however it is split.
cat >"$out/profile.toml" <<EOF
name = "netns-e2e"
seed = 12
[load]
rate = "$rate/s"
duration = "${duration}s"
max_in_flight = 5000
[target]
url = "$url"
timeout = "10s"
[[persona]]
name = "modern-client"
weight = 3
protocol_version = "2025-11-25"
[[persona]]
name = "older-client"
weight = 1
protocol_version = "2025-03-26"
accept_versions = ["2025-03-26"]
[[scenario]]
name = "call-tools"
weight = 2
steps = [
  { op = "tools/list" },
  { op = "tools/call", tool = "echo", arguments = { message = "hello" } },
  { op = "tools/call", tool = "add", arguments = { a = 2, b = 40 } },
]
[[scenario]]
name = "look-around"
weight = 1
steps = [{ op = "prompts/list" }, { op = "ping" }]
EOF

# The reference: one process at the whole load, from its own host.
in_ns one "$bin" run "$out/profile.toml" --out "$out/one" --quiet >"$out/logs/one.log" 2>&1 \
  || die "the unsharded run failed: $(tail -5 "$out/logs/one.log")"
echo "netns-e2e: unsharded run across namespaces: $out/one"

if $unsharded_only; then
  python3 - "$out/one/summary.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
ss = s["sessions"]
ok = ss["started"] > 0 and ss["failed"] == 0 and ss["unreachable"] == 0
print(f"netns-e2e: {ss['started']} sessions, {ss['failed']} failed, {ss['unreachable']} unreachable")
sys.exit(0 if ok else 1)
EOF
  exit $?
fi

# The shards: every one from its own host, all anchored to one moment.
since=$(date +%s)
start_at=$(date -u -d "+$margin seconds" +%Y-%m-%dT%H:%M:%SZ)
shard_pids=()
for ((i = 0; i < shards; i++)); do
  in_ns "s$i" "$bin" run "$out/profile.toml" --shard "$i/$shards" --start-at "$start_at" \
    --out "$out/shard-$i" --quiet "${push_args[@]}" >"$out/logs/shard-$i.log" 2>&1 &
  shard_pids+=($!); pids+=($!)
done
failed=0
for ((i = 0; i < shards; i++)); do
  wait "${shard_pids[$i]}" || { echo "netns-e2e: shard $i/$shards failed: $(tail -3 "$out/logs/shard-$i.log")" >&2; failed=1; }
done
[ "$failed" = 0 ] || exit 1
echo "netns-e2e: $shards shards started at $start_at"

timeout "$step_timeout" "$bin" merge "$out"/shard-* --out "$out/merged" --quiet >"$out/logs/merge.log" 2>&1 \
  || die "merge failed: $(tail -5 "$out/logs/merge.log")"

python3 "$(dirname "$0")/netns_compare.py" "$out/one" "$out/merged" "$max_skew_ms" "$out"/shard-*

if [ -n "$prom_url" ]; then
  # Every panel of the dashboard, read from the host of the unsharded run (the
  # Prometheus is reachable only inside the namespaces), against merge's figures.
  in_ns one python3 "$(cd "$(dirname "$0")/.." && pwd)/deploy/grafana/check_panels.py" \
    --prometheus "$prom_url" --run "netns-$tag" --summary "$out/merged/summary.json" --since "$since"
fi
