#!/usr/bin/env bash
# A Prometheus 3 (its OTLP receiver) built from the Go module proxy, for the OTLP push
# checks: `go install` of the pinned release with every service discovery left out
# (`remove_all_sd`: no cloud SDKs, ~2.5 min and ~1 GB of modules on 2 cores), into
# target/prometheus3/ once. Prints the binary's path.
#
#   export MCP_FLEET_PROMETHEUS3=$(bash scripts/prometheus3.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
# Prometheus v3.x is tagged v0.3xx.y in the Go module world.
version=v0.316.0
dir=$PWD/target/prometheus3
bin=$dir/prometheus
if [ ! -x "$bin" ] || [ "$(cat "$dir/version" 2>/dev/null)" != "$version" ]; then
  command -v go >/dev/null || { echo "prometheus3: go is not on PATH" >&2; exit 1; }
  mkdir -p "$dir"
  # The build cache is only needed for this one build: keep the disk.
  cache=$(mktemp -d)
  trap 'rm -rf "$cache"' EXIT
  GOBIN=$dir GOCACHE=$cache GOFLAGS=-mod=mod \
    go install -tags remove_all_sd "github.com/prometheus/prometheus/cmd/prometheus@$version" >&2
  echo "$version" >"$dir/version"
fi
echo "$bin"
