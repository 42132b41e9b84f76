#!/usr/bin/env bash
# Generator CPU per session of two mcp-fleet binaries, side by side in one sitting, in the
# order A B B A A B (drift in the machine's load then falls on both): handshake churn,
# `profiles/handshake.toml --clients 8 --duration 10s`, against one `serve --http` of A
# pinned to SERVER_CORE (1), the generator pinned to GEN_CORE (0); generator user + system
# CPU from /usr/bin/time, sessions from its summary.json. Loopback only; every process is
# killed on exit.
#
#   benches/abba.sh A B                 e.g. target/release/mcp-fleet target/dist/mcp-fleet
#   DURATION=10s CLIENTS=8 ORDER="A B B A A B"
#
# Prints a Markdown table (build, CPU per session of each run, sessions/s, load); the
# raw output stays in results/abba-<time>/. Figures: results/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# == 2 ]] || { sed -n 2,12p "$0" >&2; exit 2; }
a=$1 b=$2
for x in "$a" "$b"; do [[ -x $x ]] || { echo "not an executable: $x" >&2; exit 2; }; done
FLEET_BIN=$a
source benches/lib.sh
duration=${DURATION:-10s}
clients=${CLIENTS:-8}
order=${ORDER:-A B B A A B}
out=results/abba-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
start_server
declare -A cpu rate load
i=0
for which in $order; do
  i=$((i + 1))
  exe=$a
  [[ $which == B ]] && exe=$b
  dir=$out/$i-$which
  load_before=$(load_avg)
  /usr/bin/time -f '%U %S' -o "$dir.time" taskset -c "$gen_core" "$exe" run profiles/handshake.toml \
    --target "$url" --clients "$clients" --duration "$duration" --quiet --out "$dir" >/dev/null
  read -r user sys <"$dir.time"
  read -r sessions secs < <(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(s["sessions"]["started"], s["run"]["duration_s"])' "$dir/summary.json")
  per=$(python3 -c "print(f'{($user + $sys) / $sessions * 1e6:.1f}')")
  per_s=$(python3 -c "print(f'{$sessions / $secs:,.0f}')")
  cpu[$which]+="${cpu[$which]:+, }$per µs"
  rate[$which]+="${rate[$which]:+, }$per_s"
  load[$which]+="${load[$which]:+, }${load_before%% *}"
  echo "run $i ($which): $per µs per session, $per_s sessions/s, load $load_before" >&2
done
echo "| build | CPU per session | sessions/s | load |"
echo "|---|---|---|---|"
echo "| A: $a | ${cpu[A]} | ${rate[A]} | ${load[A]} |"
echo "| B: $b | ${cpu[B]} | ${rate[B]} | ${load[B]} |"
echo "results: $out" >&2
