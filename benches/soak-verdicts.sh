#!/usr/bin/env bash
# The soak verdicts against servers that keep abandoned sessions and servers that reclaim
# them, in one sitting: benches/soak-verdicts.toml (2 min, half the sessions abandoned)
# against each, the server watched by pid, one row each with the verdict on server.rss,
# its growth per session (95 % CI), the per-hour slope with R², and RSS before → after.
#
#   bash benches/soak-verdicts.sh                 # every server below
#   ONLY='py1|builtin' bash benches/soak-verdicts.sh
#   DURATION=30s bash benches/soak-verdicts.sh    # a quick look (verdicts need 10 s steady)
#   TABLE_ONLY=1 bash benches/soak-verdicts.sh    # the table again from the last folders,
#                                                 # verdicts recomputed (mcp-fleet report DIR)
#
# Servers: Python mcp 1.30.0 and 2.3.0 (interop/python_server.py; venvs from interop/run.sh
# under target/interop/, installed here when missing), rmcp (peers/rmcp-server), the
# built-in server (--fault leak; --session-ttl 5s). Server on SERVER_CORE, generator on
# GEN_CORE (lib.sh). Writes target/soak-verdicts/<server>/ and prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

work=${WORK:-target/soak-verdicts}
duration=${DURATION:-2m}
only=${ONLY:-.}
rmcp=$target_dir/release/rmcp-peer
mkdir -p "$work"
build_fleet
[[ -x $rmcp ]] || cargo build --release --quiet -p rmcp-peer

mcp_venv target/interop/venv 1.30.0
mcp_venv target/interop/venv2 2.3.0

row() { # NAME keeps|reclaims CMD…
  name=$1 kind=$2
  shift 2
  [[ $name =~ $only ]] || return 0
  if [[ -n ${TABLE_ONLY:-} ]]; then
    "$bin" report "$work/$name" >/dev/null
  else
    start_command "$work/$name.server.log" "$@" || return 0
    pid=$server_pid
    rm -rf "${work:?}/$name"
    taskset -c "$gen_core" "$bin" run benches/soak-verdicts.toml --target "$url" --server-pid "$pid" \
      --duration "$duration" --quiet --out "$work/$name" >/dev/null || true
    kill "$pid" 2>/dev/null || true
  fi
  python3 - "$work/$name/summary.json" "$name" "$kind" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
rss = next((x for x in s["soak"]["slopes"] if x["series"] == "server.rss"), None)
pts = next(x for x in s["resources"] if x["name"] == "server.rss")["points"]
mb = lambda b: f"{b / 1e6:.0f} MB"
kib = lambda b: f"{b / 1024:+.2f} KiB"
if rss is None:
    print(f"| {sys.argv[2]} | {sys.argv[3]} | – | – | – | – | {s['soak'].get('too_short', 'no slope')} |")
    sys.exit()
def per(kind):
    p = next((p for p in rss.get("per", []) if p["per"] == kind), None)
    return f"{kib(p['value'])} ({kib(p['ci95'][0])} … {kib(p['ci95'][1])})" if p else "–"
hour = rss["per_s"] * 3600 / 2**20
fds = next((x for x in s["soak"]["slopes"] if x["series"] == "server.fds"), {})
print(f"| {sys.argv[2]} | {sys.argv[3]} | **{rss.get('trend', '–')}** (FDs: {fds.get('trend', '–')}) | {per('session')} | {per('abandoned')} | {hour:+.0f} MiB/h (R² {rss['r2']:.2f}) | {mb(pts[0][1])} → {mb(pts[-1][1])} |")
PY
}

echo "soak-verdicts: $(git rev-parse --short HEAD), $duration each, $(nproc) cores, load $(load_avg)"
echo
echo "| server | sessions | verdict on server.rss | per session ended (95% CI) | per abandoned session | per hour | RSS first → last |"
echo "|---|---|---|---|---|---|---|"
row py1-stateful keeps target/interop/venv/bin/python interop/python_server.py streamable-http PORT
row py2-stateful keeps target/interop/venv2/bin/python interop/python_server.py streamable-http PORT
row rmcp-stateful keeps "$rmcp" --http 127.0.0.1:PORT
row builtin-leak keeps "$bin" serve --http 127.0.0.1:PORT --fault leak
row builtin-ttl5s reclaims "$bin" serve --http 127.0.0.1:PORT --session-ttl 5s
row py2-stateless reclaims target/interop/venv2/bin/python interop/python_server.py streamable-http PORT --stateless
row rmcp-stateless reclaims "$rmcp" --http 127.0.0.1:PORT --stateless
