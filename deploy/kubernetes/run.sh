#!/usr/bin/env bash
# The driver of a sharded run on Kubernetes: picks the run id and the start time (now +
# a margin long enough for every pod to be scheduled, pull the image and get ready),
# renders the overlay with them, applies it, waits for the shards' Indexed Job (and
# fails as soon as it fails), releases the merge Job, waits for it and prints where the
# merged report is. Names are per run (mcp-fleet-shards-<run>, mcp-fleet-merge-<run>):
# running it again with the same --run-id resumes that run instead of starting another.
# With --ceiling the shards run one ceiling search together (`mcp-fleet ceiling --shard
# auto --out /results/<run>`, the options after `--`), shard 0 merging every step; no
# merge Job.
#
#   deploy/kubernetes/run.sh [--overlay DIR] [--run-id ID] [--margin SECONDS]
#                            [--namespace NS] [--timeout SECONDS] [--render-only]
#                            [--ceiling [-- CEILING OPTIONS…]]
#
# Exit: 0 merged and every threshold passed (--ceiling: a ceiling was found); 1 a
# threshold failed on the merged figures (--ceiling: even the lowest step failed); 2 a
# shard or the merge failed, or the run did not finish within --timeout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
overlay="$here/overlays/example"
run_id=""
margin=120
namespace=""
timeout=3600
render_only=false
ceiling=false
ceiling_args=()
kubectl=${KUBECTL:-kubectl}

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }
die() { printf 'run.sh: %s\n' "$1" >&2; [ -z "${2:-}" ] || printf 'fix: %s\n' "$2" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --overlay) overlay=${2:?}; shift 2 ;;
    --run-id) run_id=${2:?}; shift 2 ;;
    --margin) margin=${2:?}; shift 2 ;;
    --namespace|-n) namespace=${2:?}; shift 2 ;;
    --timeout) timeout=${2:?}; shift 2 ;;
    --render-only) render_only=true; shift ;;
    --ceiling) ceiling=true; shift ;;
    --) shift; ceiling_args=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" "see the usage above" ;;
  esac
done

command -v "$kubectl" >/dev/null || die "no kubectl ($kubectl)" "install kubectl 1.29 or later, or set KUBECTL=/path/to/kubectl"
[ ${#ceiling_args[@]} = 0 ] || $ceiling || die "options after -- are a ceiling search's" "add --ceiling, or drop the options after --"
[ -f "$overlay/kustomization.yaml" ] || die "no kustomization.yaml in $overlay" "--overlay DIR names a kustomize overlay of deploy/kubernetes/base"
case "$margin" in ''|*[!0-9]*) die "--margin $margin: not a number of seconds" "e.g. --margin 120" ;; esac
case "$timeout" in ''|*[!0-9]*) die "--timeout $timeout: not a number of seconds" "e.g. --timeout 3600" ;; esac
overlay=$(cd "$overlay" && pwd)

# A run id is a DNS label part: lower case, digits and '-', short enough for the Job
# names (63) and the pods' names built on them.
[ -n "$run_id" ] || run_id="r$(date -u +%Y%m%d-%H%M%S)"
if ! printf '%s' "$run_id" | grep -Eq '^[a-z0-9]([a-z0-9-]{0,28}[a-z0-9])?$'; then
  die "--run-id $run_id: not 1-30 of a-z, 0-9 and '-' (starting and ending with a letter or digit)" "e.g. --run-id nightly-42"
fi
shards_job="mcp-fleet-shards-$run_id"
merge_job="mcp-fleet-merge-$run_id"
ns=()
[ -z "$namespace" ] || ns=(--namespace "$namespace")

# A JSON string of $1.
json_string() {
  local t=${1//\\/\\\\}
  t=${t//\"/\\\"}
  printf '"%s"' "$t"
}

# --ceiling: the shards' args become a ceiling search's, and the merge Job goes.
ceiling_patches() {
  # $(RUN_ID) is Kubernetes' expansion, in the pod: kept as written.
  # shellcheck disable=SC2016
  local args='"ceiling", "/etc/mcp-fleet/profile.toml", "--shard", "auto", "--out", "/results/$(RUN_ID)", "--quiet"' a
  for a in "${ceiling_args[@]}"; do args+=", $(json_string "$a")"; done
  cat <<EOF
  - target: {kind: Job, name: mcp-fleet-shards}
    patch: '[{"op": "replace", "path": "/spec/template/spec/containers/0/args", "value": [${args//\'/\'\'}]}]'
  - patch: |-
      \$patch: delete
      apiVersion: batch/v1
      kind: Job
      metadata:
        name: mcp-fleet-merge
EOF
}

# The per-run layer: the overlay with this run's id and start time, and the Jobs named
# after the run. kustomize loads files only from below its own folder, so the layer is a
# temporary folder that names the overlay as its resource.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
render() {
  local start_at=$1
  cat >"$work/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(realpath --relative-to="$work" "$overlay")
configMapGenerator:
  - name: mcp-fleet-run
    behavior: replace
    literals:
      - RUN_ID=$run_id
      - START_AT=$start_at
patches:
  - target: {kind: Job, name: mcp-fleet-shards}
    patch: '[{"op": "replace", "path": "/metadata/name", "value": "$shards_job"}]'
    options: {allowNameChange: true}
  - target: {kind: Job, name: mcp-fleet-merge}
    patch: '[{"op": "replace", "path": "/metadata/name", "value": "$merge_job"}]'
    options: {allowNameChange: true}
EOF
  if $ceiling; then ceiling_patches >>"$work/kustomization.yaml"; fi
  "$kubectl" kustomize "$work"
}

# One of Complete, Failed, Suspended or Running for a Job.
job_state() {
  local conds
  conds=$("$kubectl" "${ns[@]}" get job "$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}')
  case " $conds " in
    *" Failed "*|*" FailureTarget "*) echo Failed ;;
    *" Complete "*) echo Complete ;;
    *" Suspended "*) echo Suspended ;;
    *) echo Running ;;
  esac
}

# Waits for a Job to complete; on failure prints its pods' last lines and exits.
deadline=$(( $(date +%s) + timeout ))
wait_job() {
  local job=$1 state
  while :; do
    state=$(job_state "$job")
    case "$state" in
      Complete) return 0 ;;
      Failed)
        echo "run.sh: job/$job failed; the last lines of its pods:" >&2
        "$kubectl" "${ns[@]}" logs --selector "job-name=$job" --prefix --tail 20 >&2 || true
        return 1 ;;
    esac
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "run.sh: job/$job still $state after ${timeout}s" >&2
      return 2
    fi
    sleep 5
  done
}

if $render_only; then
  render "$(date -u -d "+$margin seconds" +%Y-%m-%dT%H:%M:%SZ)"
  exit 0
fi

if "$kubectl" "${ns[@]}" get job "$shards_job" >/dev/null 2>&1; then
  echo "run.sh: run $run_id exists (job/$shards_job): resuming it"
else
  start_at=$(date -u -d "+$margin seconds" +%Y-%m-%dT%H:%M:%SZ)
  render "$start_at" >"$work/rendered.yaml"
  "$kubectl" "${ns[@]}" apply -f "$work/rendered.yaml"
  echo "run.sh: run $run_id: every shard starts at $start_at"
fi

if $ceiling; then
  # Shard 0 exits 1 when even the lowest step failed: the search's answer, not a crash.
  rc=0
  wait_job "$shards_job" || rc=$?
  if [ "$rc" = 1 ]; then
    code=$("$kubectl" "${ns[@]}" get pods --selector "job-name=$shards_job,batch.kubernetes.io/job-completion-index=0" \
      -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode}' 2>/dev/null || true)
    [ "$code" = 1 ] || exit 2
  elif [ "$rc" != 0 ]; then
    exit 2
  fi
  cat <<EOF
run.sh: the ceiling search $run_id is on the volume claim mcp-fleet-results, at
  /results/$run_id (ceiling.json, report.html, steps/ merged from every shard). Copy it
  out from any pod that mounts the claim, e.g. kubectl cp POD:/results/$run_id ./$run_id
EOF
  [ "$rc" = 0 ] || exit 1
  exit 0
fi

wait_job "$shards_job" || { rc=$?; [ "$rc" = 1 ] && echo "run.sh: not merging: a shard failed" >&2; exit 2; }
echo "run.sh: every shard of $run_id succeeded; merging"
"$kubectl" "${ns[@]}" patch job "$merge_job" --type merge -p '{"spec":{"suspend":false}}' >/dev/null
merge_rc=0
wait_job "$merge_job" || merge_rc=$?
"$kubectl" "${ns[@]}" logs "job/$merge_job" || true
if [ "$merge_rc" != 0 ]; then
  # merge exits 1 when a threshold failed: the report is written all the same.
  code=$("$kubectl" "${ns[@]}" get pods --selector "job-name=$merge_job" \
    -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode}' 2>/dev/null || true)
  if [ "$code" != 1 ]; then exit 2; fi
fi
cat <<EOF
run.sh: the merged report of $run_id is on the volume claim mcp-fleet-results, at
  /results/$run_id/merged (summary.json, report.html, .hlog, CSV, thresholds.xml)
and the shards' folders beside it, /results/$run_id/shard-*. Copy it out from any pod
that mounts the claim, e.g. kubectl cp POD:/results/$run_id/merged ./$run_id
EOF
[ "$merge_rc" = 0 ] || exit 1
