#!/usr/bin/env bash
# Generator CPU per session with each output on and off, side by side in one sitting: handshake churn (`profiles/handshake.toml --clients 8 --duration 10s`) against
# one `serve --http` pinned to SERVER_CORE, the generator pinned to GEN_CORE, every
# variant run in the order of ORDER (default `off rw otlp otlp rw off`: drift in the
# machine's load falls on all). Pushes go every second (five times the default) to a
# real Prometheus 3 (remote write and OTLP receivers on, pinned beside the server); the
# variants: off, rw (--push prometheus-rw), otlp (--push otlp), both, dashboard (the live
# page rendered every second, no browser attached), requests (--requests FILE.ndjson)
# and requests-zst (FILE.ndjson.zst). Loopback only; every process is killed on exit.
#
#   benches/outputs.sh            ORDER="off rw otlp both both otlp rw off" DURATION=10s
#   ORDER="off dashboard requests requests-zst requests-zst requests dashboard off"
#   LOAD="--rate 15000/s --keep-alive"   (default: --clients 8)
#   PROMETHEUS3=path              (default: scripts/prometheus3.sh builds it)
#
# Prints a Markdown table (variant, CPU per session of each run, sessions/s, and pushes
# delivered or the requests file's bytes per session);
# raw results in results/outputs-<time>/. Figures: results/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh
build_fleet
duration=${DURATION:-10s}
# The load: closed churn by default; e.g. LOAD="--rate 15000/s --keep-alive" for the open
# model near its ceiling.
read -r -a load <<<"${LOAD:---clients ${CLIENTS:-8}}"
order=${ORDER:-off rw otlp otlp rw off}
prom=${PROMETHEUS3:-$(bash scripts/prometheus3.sh)}
out=results/outputs-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out/prometheus"
start_server
printf 'global:\n  scrape_interval: 1m\n' >"$out/prometheus/prometheus.yml"
taskset -c "$server_core" "$prom" --config.file="$out/prometheus/prometheus.yml" \
  --storage.tsdb.path="$out/prometheus/data" --web.listen-address=127.0.0.1:0 \
  --web.enable-remote-write-receiver --web.enable-otlp-receiver >"$out/prometheus.log" 2>&1 &
pids+=($!)
prom_addr=""
for _ in $(seq 100); do
  prom_addr=$(grep -o 'msg="Listening on".*address=[0-9.:]*' "$out/prometheus.log" | grep -o '[0-9.]*:[0-9]*$' | head -1 || true)
  [[ -n $prom_addr ]] && break
  sleep 0.1
done
[[ -n $prom_addr ]] || { echo "prometheus did not start: $(tail -3 "$out/prometheus.log")" >&2; exit 1; }
rw=(--push "prometheus-rw=http://$prom_addr/api/v1/write")
otlp=(--push "otlp=http://$prom_addr/api/v1/otlp/v1/metrics")
declare -A cpu rate delivered
i=0
for variant in $order; do
  i=$((i + 1))
  case $variant in
    off) push=() ;;
    rw) push=("${rw[@]}") ;;
    otlp) push=("${otlp[@]}") ;;
    both) push=("${rw[@]}" "${otlp[@]}") ;;
    dashboard) push=(--dashboard 127.0.0.1:0) ;;
    requests) push=(--requests "$out/$i.ndjson") ;;
    requests-zst) push=(--requests "$out/$i.ndjson.zst") ;;
    *) echo "unknown variant $variant (off, rw, otlp, both, dashboard, requests, requests-zst)" >&2; exit 2 ;;
  esac
  dir=$out/$i-$variant
  /usr/bin/time -f '%U %S' -o "$dir.time" taskset -c "$gen_core" "$bin" run profiles/handshake.toml \
    --target "$url" "${load[@]}" --duration "$duration" --quiet --out "$dir" \
    "${push[@]}" --push-every 1s --run-label "bench-$i" >/dev/null
  read -r user sys <"$dir.time"
  read -r sessions secs pushed < <(python3 -c '
import glob, json, os, sys
s = json.load(open(sys.argv[1]))
started = s["sessions"]["started"]
note = "+".join(str(x["delivered"]) for x in s.get("outputs", [])) or "-"
files = glob.glob(sys.argv[2] + ".ndjson*")
if files:
    note = "%.0fB/session" % (os.path.getsize(files[0]) / started)
print(started, s["run"]["duration_s"], note)' "$dir/summary.json" "$out/$i")
  per=$(python3 -c "print(f'{($user + $sys) / $sessions * 1e6:.1f}')")
  per_s=$(python3 -c "print(f'{$sessions / $secs:,.0f}')")
  cpu[$variant]+="${cpu[$variant]:+, }$per µs"
  rate[$variant]+="${rate[$variant]:+, }$per_s"
  delivered[$variant]+="${delivered[$variant]:+, }$pushed"
  echo "run $i ($variant): $per µs per session, $per_s sessions/s, pushes delivered $pushed, load $(load_avg)" >&2
done
echo "| output | CPU per session | sessions/s | pushes delivered / file |"
echo "|---|---|---|---|"
for variant in off rw otlp both dashboard requests requests-zst; do
  [[ -n ${cpu[$variant]:-} ]] || continue
  echo "| $variant | ${cpu[$variant]} | ${rate[$variant]} | ${delivered[$variant]} |"
done
echo "results: $out" >&2
