# shellcheck shell=bash
# shellcheck disable=SC2034  # the pins and paths are used by the scripts that source this
# Sourced by interop/run.sh and benches/sdk-matrix.sh: the pins and installs (npm, PyPI)
# of the third-party servers both run, cached under target/interop/. Needs ROOT, WORK and
# a `say` function from the script that sources it.

EVERYTHING_VERSION="2026.8.31"   # @modelcontextprotocol/server-everything
MCP1_VERSION="1.30.0"            # newest mcp 1.x on PyPI
MCP2_VERSION="2.3.0"             # newest mcp 2.x on PyPI (serves both protocol eras)
EVERYTHING_DIR="$WORK/npm/node_modules/@modelcontextprotocol/server-everything"
EVERYTHING="$EVERYTHING_DIR/dist/index.js"

installed_npm_version() {
  [ -f "$EVERYTHING_DIR/package.json" ] || return 0
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$EVERYTHING_DIR/package.json"
}

installed_mcp_version() { # VENV
  [ -x "$1/bin/python" ] || return 0
  "$1/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null || true
}

install_everything() {
  if [ "$(installed_npm_version)" = "$EVERYTHING_VERSION" ]; then return 0; fi
  say "install: @modelcontextprotocol/server-everything@$EVERYTHING_VERSION (npm)"
  mkdir -p "$WORK/npm"
  if ! npm install --prefix "$WORK/npm" --no-audit --no-fund --loglevel=error \
      "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" >"$WORK/npm-install.log" 2>&1; then
    tail -20 "$WORK/npm-install.log"; return 1
  fi
}

install_venv() { # VENV VERSION
  local venv="$1" version="$2" spec="mcp==$2"
  # 1.x with its WebSocket transport's extra (the `websockets` package).
  case $version in 1.*) spec="mcp[ws]==$version" ;; esac
  if [ "$(installed_mcp_version "$venv")" = "$version" ]; then
    case $version in 1.*) "$venv/bin/python" -c 'import websockets' 2>/dev/null || rm -rf "$venv" ;; esac
  fi
  if [ "$(installed_mcp_version "$venv")" = "$version" ]; then return 0; fi
  say "install: $spec (pip, $venv)"
  rm -rf "$venv"
  python3 -m venv "$venv" &&
    "$venv/bin/pip" install --disable-pip-version-check -q "$spec" >"$venv.install.log" 2>&1 ||
    { tail -20 "$venv.install.log"; return 1; }
}
