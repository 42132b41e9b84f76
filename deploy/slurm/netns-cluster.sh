#!/usr/bin/env bash
# A real two-node Slurm on one machine, network namespaces standing for the nodes: munge,
# slurmctld in one namespace, slurmd n1 and n2 in two others (Debian's slurm-wlm 22.05),
# all on one bridge in a namespace of its own. Then either a two-task check job
# (`srun` prints each task's SLURM_PROCID/SLURM_NTASKS and node, and `mcp-fleet run
# --shard auto` would read them), or, with --sbatch, deploy/slurm/mcp-fleet.sbatch
# against the built-in server in a fourth namespace, merged on the first node.
# Everything it started (daemons, namespaces, the state folder) is removed on any exit.
#
#   deploy/slurm/netns-cluster.sh [--bin PATH] [--sbatch] [--keep DIR]
#
# Needs root, iproute2, slurm-wlm and munge (apt-get install slurm-wlm munge).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${MCP_FLEET:-target/release/mcp-fleet}
sbatch_mode=false
keep=""
die() { printf 'netns-cluster: %s\n' "$1" >&2; [ -z "${2:-}" ] || printf 'fix: %s\n' "$2" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=${2:?}; shift 2 ;;
    --sbatch) sbatch_mode=true; shift ;;
    --keep) keep=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1" "see --help" ;;
  esac
done
[ "$(id -u)" = 0 ] || die "needs root" "run it as root"
for c in ip slurmctld slurmd srun sbatch munged; do
  command -v "$c" >/dev/null || die "no $c" "apt-get install iproute2 slurm-wlm munge"
done
if $sbatch_mode; then
  [ -x "$bin" ] || die "no mcp-fleet program at $bin" "cargo build --release, or --bin PATH"
  bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
fi

tag="mfs$$"
work=${keep:-$(mktemp -d /tmp/netns-cluster.XXXXXX)}
mkdir -p "$work"
chmod 755 "$work"
namespaces=()
pids=()
cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.5
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  [ -n "$keep" ] || rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The network: ctl 10.250.13.1, n1 .11, n2 .12, the server .2.
net=10.250.13
hub="$tag-hub"
ip netns add "$hub"; namespaces+=("$hub")
ip -n "$hub" link add br0 type bridge
ip -n "$hub" link set br0 up
add_host() {
  local ns="$tag-$1"
  ip netns add "$ns"; namespaces+=("$ns")
  ip -n "$hub" link add "v-$1" type veth peer name eth0 netns "$ns"
  ip -n "$hub" link set "v-$1" master br0 up
  ip -n "$ns" addr add "$2/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
}
add_host ctl "$net.1"
add_host n1 "$net.11"
add_host n2 "$net.12"
add_host srv "$net.2"

# munge: its own key (slurmctld must run under the machine's host name: Slurm checks
# that it is the SlurmctldHost),  and socket for this cluster (every daemon shares the filesystem).
# munged wants its key private and its socket's folder open to all.
mkdir -p "$work/munge-key" "$work/munge" "$work/spool" "$work/state" "$work/log"
dd if=/dev/urandom of="$work/munge-key/munge.key" bs=1024 count=1 status=none
chown -R munge:munge "$work/munge-key" "$work/munge"
chmod 700 "$work/munge-key"
chmod 400 "$work/munge-key/munge.key"
chmod 755 "$work/munge"
chmod 777 "$work/log"
sock="$work/munge/munge.socket"
runuser -u munge -- munged --foreground --key-file "$work/munge-key/munge.key" --socket "$sock" \
  --pid-file "$work/munge/munged.pid" --log-file "$work/log/munged.log" --seed-file "$work/munge-key/seed" &
pids+=($!)
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || die "munged did not start: $(cat "$work/log/munged.log" 2>/dev/null)"

cpus=$(nproc)
cat >"$work/slurm.conf" <<EOF
ClusterName=mcpfleet
SlurmctldHost=$(hostname -s)($net.1)
MailProg=/bin/true
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool/%n
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/spool/slurmd-%n.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd-%n.log
SlurmctldPort=6817
SlurmdPort=6818
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=n1 NodeAddr=$net.11 CPUs=$cpus State=UNKNOWN
NodeName=n2 NodeAddr=$net.12 CPUs=$cpus State=UNKNOWN
PartitionName=fleet Nodes=n1,n2 Default=YES MaxTime=10 State=UP
EOF
printf 'CgroupPlugin=cgroup/v1\nCgroupAutomount=no\nConstrainCores=no\nConstrainRAMSpace=no\n' >"$work/cgroup.conf"
export SLURM_CONF="$work/slurm.conf"

ip netns exec "$tag-ctl" slurmctld -D -i -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
sleep 1
for n in n1 n2; do
  mkdir -p "$work/spool/$n"
  ip netns exec "$tag-$n" slurmd -D -N "$n" -f "$SLURM_CONF" >"$work/log/slurmd-$n.out" 2>&1 &
  pids+=($!)
done
ctl() { timeout 60 ip netns exec "$tag-ctl" "$@"; }
ready=false
for _ in $(seq 60); do
  kill -0 "${pids[1]}" 2>/dev/null || die "slurmctld stopped: $(tail -n 5 "$work/log/slurmctld.out")"
  states=$(timeout 5 ip netns exec "$tag-ctl" sinfo -h -o '%T' -p fleet 2>/dev/null | sort -u || true)
  if [ "$states" = "idle" ]; then ready=true; break; fi
  sleep 0.5
done
$ready || die "the nodes did not come up: $(ctl sinfo 2>&1; tail -n 5 "$work"/log/*.log)"
echo "netns-cluster: slurmctld at $net.1, nodes: $(ctl sinfo -h -N -o '%N=%T' | tr '\n' ' ')"

if ! $sbatch_mode; then
  # The check job: two tasks on two nodes, each saying what --shard auto reads.
  # shellcheck disable=SC2016
  out=$(ctl srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --time=1 \
    bash -c 'echo "task $SLURM_PROCID of $SLURM_NTASKS on $SLURMD_NODENAME"' | sort)
  echo "$out"
  [ "$out" = "$(printf 'task 0 of 2 on n1\ntask 1 of 2 on n2')" ] || die "unexpected tasks: $out"
  echo "netns-cluster: 1 passed, 0 failed"
  exit 0
fi

# The real job: the built-in server on its own host, the sbatch script on the cluster.
ip netns exec "$tag-srv" "$bin" serve --http "$net.2:0" >"$work/server.out" 2>&1 &
pids+=($!)
url=""
for _ in $(seq 100); do
  url=$(grep -o 'http://[0-9.:]*/mcp' "$work/server.out" | head -1 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || die "the server did not start: $(cat "$work/server.out")"
cat >"$work/profile.toml" <<EOF
name = "slurm-e2e"
seed = 7
[load]
rate = "100/s"
duration = "3s"
[target]
url = "$url"
EOF
# The state a job ended in (or its state after two minutes).
job_end() {
  local state=""
  for _ in $(seq 240); do
    state=$(ctl scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 || true)
    case "$state" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) break ;; esac
    sleep 0.5
  done
  echo "$state"
}

job=$(ctl sbatch --parsable --nodes=2 --ntasks=2 --chdir="$work" --time=5 \
  --export="ALL,PROFILE=$work/profile.toml,RESULTS=$work/results,MARGIN=5,MCP_FLEET=$bin" \
  "$here/mcp-fleet.sbatch")
echo "netns-cluster: job $job submitted"
state=$(job_end "$job")
exit_code=$(ctl scontrol show job "$job" | grep -o ' ExitCode=[0-9:]*' | cut -d= -f2)
cat "$work/mcp-fleet-$job.out" || true
echo "netns-cluster: job $job $state, exit $exit_code"
merged="$work/results/slurm-$job/merged/summary.json"
[ "$state" = COMPLETED ] && [ -f "$merged" ] || { echo "netns-cluster: 0 passed, 1 failed"; exit 1; }
python3 - "$merged" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["sessions"]
print(f"netns-cluster: merged {s['started']} sessions, {s['failed']} failed (want 300, 0)")
sys.exit(0 if (s["started"], s["failed"]) == (300, 0) else 1)
EOF

# A ceiling search over the same two nodes: they climb 20, 40, 80/s together, task 0
# merging each step in the shared folder.
job=$(ctl sbatch --parsable --nodes=2 --ntasks=2 --chdir="$work" --time=5 \
  --export="ALL,MODE=ceiling,PROFILE=$work/profile.toml,RESULTS=$work/results,MCP_FLEET=$bin,MCP_FLEET_ARGS=--from 20/s --to 80/s --step 1s --step-warmup 0s --shard-wait 30s" \
  "$here/mcp-fleet.sbatch")
echo "netns-cluster: ceiling job $job submitted"
state=$(job_end "$job")
cat "$work/mcp-fleet-$job.out" || true
echo "netns-cluster: ceiling job $job $state"
ceiling="$work/results/slurm-$job/ceiling.json"
[ "$state" = COMPLETED ] && [ -f "$ceiling" ] || { echo "netns-cluster: 1 passed, 1 failed"; exit 1; }
python3 - "$ceiling" <<'EOF'
import json, sys
f = json.load(open(sys.argv[1]))
rates = [s["offered_per_s"] for s in f["steps"]]
started = [s["started"] for s in f["steps"]]
print(f"netns-cluster: ceiling over {f['settings'].get('shards')} shards, steps {rates}, started {started}")
ok = f["complete"] and f["settings"].get("shards") == 2 and rates == [20, 40, 80] \
    and all(abs(n - r) <= r * 0.1 for n, r in zip(started, rates))
sys.exit(0 if ok else 1)
EOF
echo "netns-cluster: 2 passed, 0 failed"
