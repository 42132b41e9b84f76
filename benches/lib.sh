# Helpers shared by the benchmark scripts (sourced, not run). Everything stays on
# loopback; every process started here is recorded in `pids` and killed on exit.
#
# Environment: CARGO_TARGET_DIR (where mcp-fleet and oha are built), SERVER_CORE /
# GEN_CORE (the cores the server and the generator are pinned to; default 1 and 0),
# FLEET_BIN (an mcp-fleet binary to measure instead of building this tree's, e.g. an
# earlier commit's for a before/after row). Without it, this tree's `dist` profile (fat
# LTO, one codegen unit: what published binaries are) is built and measured.

target_dir=${CARGO_TARGET_DIR:-target}
bin=${FLEET_BIN:-$target_dir/dist/mcp-fleet}
server_core=${SERVER_CORE:-1}
gen_core=${GEN_CORE:-0}
hz=$(getconf CLK_TCK)
pids=()

cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

build_fleet() {
  [[ -n ${FLEET_BIN:-} ]] || cargo build --profile dist --locked --quiet -p mcp-fleet
}

# oha (crates.io), pinned, built once into the target directory.
oha_bin() {
  local oha=$target_dir/tools/bin/oha
  if [[ ! -x $oha ]]; then
    cargo install oha --version 1.16.0 --locked --root "$target_dir/tools" --quiet >&2
  fi
  echo "$oha"
}

# The TypeScript SDK and mcp-stress, as pinned in benches/package.json, into benches/node.
node_deps() {
  if [[ ! -d benches/node/node_modules/@modelcontextprotocol/sdk || benches/package.json -nt benches/node/package.json ]]; then
    mkdir -p benches/node
    cp benches/package.json benches/node/package.json
    npm install --prefix benches/node --no-audit --no-fund --silent >&2
  fi
}
mcp_stress=benches/node/node_modules/@mcp-stress/linux-x64/bin/mcp-stress

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

load_avg() { cut -d' ' -f1-3 /proc/loadavg; }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# start_server [serve flags…]: the reference server on a free port, pinned to its core;
# sets server_pid, port, url.
start_server() {
  port=$(free_port)
  taskset -c "$server_core" "$bin" serve --http "127.0.0.1:$port" "$@" 2>/dev/null &
  server_pid=$!
  pids+=("$server_pid")
  url=http://127.0.0.1:$port/mcp
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "server did not start on port $port" >&2
  return 1
}

# start_command LOG CMD…: any server on a free port (PORT in the arguments is replaced by
# it), pinned to its core, its output in LOG; sets server_pid, port, url.
start_command() {
  local log=$1
  shift
  port=$(free_port)
  taskset -c "$server_core" "${@//PORT/$port}" >"$log" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  url=http://127.0.0.1:$port/mcp
  for _ in $(seq 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "server did not start on port $port: $(tail -3 "$log")" >&2
  return 1
}

# mcp_venv DIR VERSION: a venv with the Python SDK at VERSION (interop/run.sh's place).
mcp_venv() {
  if [[ ! -x $1/bin/python || $("$1/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null) != "$2" ]]; then
    rm -rf "$1" && python3 -m venv "$1" && "$1/bin/pip" install -q --disable-pip-version-check "mcp==$2" >&2
  fi
}

stop_server() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
}

# timed FILE CMD…: run CMD pinned to the generator core under a deadline; FILE gets
# "user_s sys_s maxrss_kb" of CMD.
timed() {
  local file=$1
  shift
  /usr/bin/time -f '%U %S %M' -o "$file" timeout -k 5 300 taskset -c "$gen_core" "$@"
}
