#!/usr/bin/env bash
# Share of tool calls a server accepts when mcp-fleet generates their arguments, per JSON
# Schema feature, for two mcp-fleet binaries (before and after issue 16):
#
#   benches/arguments.sh BEFORE AFTER
#   benches/arguments.sh build:4ce2a91 target/dist/mcp-fleet
#
# BEFORE / AFTER: mcp-fleet binaries, or `build:COMMIT` (built here in a temporary git
# worktree under target/bench-before/ with its own CARGO_TARGET_DIR, kept for next time).
# The server is always AFTER's `serve --app-tools` (127.0.0.1, a port from :0, started
# here, killed at the end; a fresh one per run), whose feature_* tools each use one
# schema feature and validate their arguments strictly (-32602 otherwise). For each tool
# and binary: a closed-model run of CALLS sessions (default 200) of `tools/list` + one
# generated call, so a binary that ends a session at its first RPC error still makes
# every call. accepted = tool_acceptance[T].accepted (summary schema 9), else
# tools[T].count - errors - tool_errors (schema 8).
#
# When interop/run.sh has installed them (target/interop/venv-time, target/interop/npm),
# rows for the real application servers too: mcp-server-time (PyPI) and
# @modelcontextprotocol/server-memory (npm) over stdio, generated only (both binaries),
# then with pins from a pool / a capture (interop/profiles/time.toml, memory.toml; AFTER
# only: BEFORE cannot read them).
#
#   CALLS=200 CLIENTS=4 STDIO_SESSIONS=10 (sessions per stdio tool run, 10 calls each;
#   one client at a time, 30 s per request: a Python or Node start-up on a busy machine)
#
# Output: a markdown table on stdout; raw results in results/bench-arguments-<time>/.
# Every run is bounded by `timeout`; everything stays on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

calls=${CALLS:-200}
clients=${CLIENTS:-4}
stdio_sessions=${STDIO_SESSIONS:-10}
run_limit=300
[[ $# -eq 2 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

# resolve BIN-OR-build:COMMIT → an executable path
resolve() {
  local spec=$1
  if [[ $spec == build:* ]]; then
    local commit=${spec#build:} dir
    dir=$PWD/target/bench-before/$commit
    [[ -d $dir/src ]] || git worktree add --detach "$dir" "$commit" >&2
    # The commit's `dist` profile where it has one; before issue 37 its release
    # profile was the same fat-LTO build.
    local profile=release
    grep -q '^\[profile\.dist\]' "$dir/Cargo.toml" && profile=dist
    if [[ ! -x $dir/target/$profile/mcp-fleet ]]; then
      echo "building mcp-fleet at $commit in $dir" >&2
      CARGO_TARGET_DIR=$dir/target cargo build --profile "$profile" --quiet \
        --manifest-path "$dir/Cargo.toml" -p mcp-fleet >&2
    fi
    echo "$dir/target/$profile/mcp-fleet"
  else
    [[ -x $spec ]] || { echo "not an executable: $spec" >&2; exit 2; }
    case $spec in /*) echo "$spec" ;; *) echo "$PWD/$spec" ;; esac
  fi
}
before=$(resolve "$1")
after=$(resolve "$2")
bin=$after # start_server (benches/lib.sh) serves with this one
out=results/bench-arguments-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
echo "results in $out; before $("$before" --version 2>/dev/null), after $("$after" --version 2>/dev/null); load $(load_avg)" >&2

# profile FILE TOOL SESSIONS COUNT: tools/list, then COUNT generated calls of TOOL; in the
# syntax both binaries read (no [arguments], no on_error).
profile() {
  local n=$clients
  [[ $4 -gt 1 ]] && n=1
  cat >"$1" <<EOF
name = "arguments-$2"
seed = 16

[load]
clients = $n
sessions = $3
think = "0ms"

[target]
timeout = "30s"

[[persona]]
name = "client"
protocol_version = "2025-11-25"
client_info = { name = "mcp-fleet-bench", version = "1" }
capabilities = {}

[[scenario]]
name = "generated"
steps = [
  { op = "tools/list" },
  { op = "mix", count = $4, calls = [{ tool = "$2" }] },
]
EOF
}

# accepted DIR TOOL → "accepted calls" from DIR/summary.json ("- -" if there is none)
accepted() {
  python3 - "$1/summary.json" "$2" <<'EOF'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("- -"); sys.exit()
tool = sys.argv[2]
ta = (s.get("tool_acceptance") or {}).get(tool)
if ta is not None:
    print(ta.get("accepted", 0), ta.get("calls", 0))
else:
    t = (s.get("tools") or {}).get(tool) or {}
    n = t.get("count", 0)
    print(max(0, n - t.get("errors", 0) - t.get("tool_errors", 0)), n)
EOF
}

# fleet BIN DIR PROFILE TARGET-ARGS…: one bounded run; its exit code is not the figure.
fleet() {
  local b=$1 dir=$2 prof=$3
  shift 3
  timeout -k 5 "$run_limit" "$b" run "$prof" "$@" --quiet --out "$dir" \
    >"$dir.log" 2>&1 || true
}

# share "A N" → "A/N (P %)"
share() {
  read -r a n <<<"$1"
  if [[ $n == - || $n == 0 ]]; then echo "—"; else
    python3 -c "import sys; a,n=int(sys.argv[1]),int(sys.argv[2]); print(f'{a}/{n} ({100*a/n:.0f} %)')" "$a" "$n"
  fi
}

rows=()
row() { rows+=("| $1 | $2 | $3 |"); }

# ---------------------------------------------------------------- reference server
features=(feature_ref:'$ref/$defs model, enum, Optional[int]'
  feature_pattern:pattern
  feature_formats:'format (10 formats)'
  feature_numbers:'multipleOf, exclusive bounds, integer'
  feature_lengths:'min/maxLength, min/maxItems, uniqueItems'
  feature_choice:'anyOf/oneOf/allOf, const, nullable'
  feature_objects:'additionalProperties false, nested, default/examples')
for entry in "${features[@]}"; do
  tool=${entry%%:*}
  label=${entry#*:}
  profile "$out/$tool.toml" "$tool" "$calls" 1
  figures=()
  for side in before after; do
    b=$before
    [[ $side == after ]] && b=$after
    start_server --app-tools
    fleet "$b" "$out/$tool-$side" "$out/$tool.toml" --target "$url"
    stop_server
    figures+=("$(share "$(accepted "$out/$tool-$side" "$tool")")")
  done
  row "\`$tool\`: $label" "${figures[0]}" "${figures[1]}"
  echo "$tool: ${figures[*]}" >&2
done

# ---------------------------------------------------------------- real servers
time_py=target/interop/venv-time/bin/python
if [[ -x $time_py ]]; then
  time_cmd="$PWD/$time_py -m mcp_server_time --local-timezone UTC"
  for tool in get_current_time convert_time; do
    profile "$out/time-$tool.toml" "$tool" "$stdio_sessions" 10
    figures=()
    for side in before after; do
      b=$before
      [[ $side == after ]] && b=$after
      fleet "$b" "$out/time-$tool-$side" "$out/time-$tool.toml" --stdio "$time_cmd" --timeout 30s
      figures+=("$(share "$(accepted "$out/time-$tool-$side" "$tool")")")
    done
    row "mcp-server-time \`$tool\`, generated" "${figures[0]}" "${figures[1]}"
  done
  fleet "$after" "$out/time-pinned" interop/profiles/time.toml --stdio "$time_cmd" \
    --clients 1 --timeout 30s
  for tool in get_current_time convert_time; do
    row "mcp-server-time \`$tool\`, zones from a pool" "—" \
      "$(share "$(accepted "$out/time-pinned" "$tool")")"
  done
else
  echo "no mcp-server-time (run interop/run.sh once to install it): its rows are left out" >&2
fi

memory_js=target/interop/npm-memory/node_modules/@modelcontextprotocol/server-memory/dist/index.js
if [[ -f $memory_js ]]; then
  memory_cmd="bash $PWD/interop/memory_server.sh $PWD/$out/memory $PWD/$memory_js"
  for tool in create_entities add_observations search_nodes; do
    profile "$out/memory-$tool.toml" "$tool" "$stdio_sessions" 10
    figures=()
    for side in before after; do
      b=$before
      [[ $side == after ]] && b=$after
      fleet "$b" "$out/memory-$tool-$side" "$out/memory-$tool.toml" --stdio "$memory_cmd" --timeout 30s
      figures+=("$(share "$(accepted "$out/memory-$tool-$side" "$tool")")")
    done
    row "server-memory \`$tool\`, generated" "${figures[0]}" "${figures[1]}"
  done
  fleet "$after" "$out/memory-captured" interop/profiles/memory.toml --stdio "$memory_cmd" \
    --clients 1 --timeout 30s
  for tool in create_entities open_nodes add_observations; do
    row "server-memory \`$tool\`, name pinned / captured" "—" \
      "$(share "$(accepted "$out/memory-captured" "$tool")")"
  done
else
  echo "no server-memory (run interop/run.sh once to install it): its rows are left out" >&2
fi

{
  echo "| feature (tool) | accepted before | accepted after |"
  echo "| --- | --- | --- |"
  printf '%s\n' "${rows[@]}"
} | tee "$out/report.md"
