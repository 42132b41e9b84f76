#!/usr/bin/env bash
# @modelcontextprotocol/server-memory over stdio, one knowledge-graph file per process:
# mcp-fleet starts the command once per session, and sessions writing one file at once
# would race. The files go into DIR (under target/interop), never into the SDK's folder.
#
#   interop/memory_server.sh DIR SERVER_JS
set -euo pipefail
dir="$1"
js="$2"
mkdir -p "$dir"
export MEMORY_FILE_PATH="$dir/memory-$$-$RANDOM.jsonl"
exec node "$js"
