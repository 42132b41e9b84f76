"""Compares a merged sharded run with one process at the same load (scripts/netns-e2e.sh):
every count of summary.json (sessions, phases, personas, scenarios, tools, transports,
eras, protocol versions, counters, failures) must be identical, and the shards' start
skew under a bound. Timings (fields in µs, s or per second) are left out: they differ
between any two runs.

    python3 scripts/netns_compare.py ONE_DIR MERGED_DIR MAX_SKEW_MS SHARD_DIR...

The start skew of a shard is how late its schedule really began after the shared
--start-at: the state file's lateness field when it has one (a key like late_us,
start_late_us or late_ns), else the earliest `lag` of its summary (its first arrival's
lateness). The skew between shards is the spread of those, plus any difference of the
anchors themselves (started_at), which must all be equal.
"""

import json
import os
import re
import sys

TIMING_SUFFIXES = ("_us", "_ns", "_ms", "_s", "_per_s", "_at")
TIMING_KEYS = {"clamped", "resources", "soak", "run", "tool", "thresholds", "findings", "schema_version"}
# The percentiles' confidence bounds (`ci95`: µs), beside their `samples` count.
BOUND_KEYS = {"p50", "p90", "p95", "p99", "p999"}
COUNT_SECTIONS = (
    "sessions",
    "phases",
    "personas",
    "scenarios",
    "tools",
    "transports",
    "eras",
    "protocol_versions",
    "counters",
    "failures",
    "malformed_messages",
)


def counts(value, path=""):
    """Every whole-number leaf that is a count, by its path."""
    found = {}
    if isinstance(value, dict):
        for k, v in value.items():
            if k in TIMING_KEYS or k.endswith(TIMING_SUFFIXES):
                continue
            if path.endswith("ci95") and k in BOUND_KEYS:
                continue
            found.update(counts(v, f"{path}.{k}" if path else k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found.update(counts(v, f"{path}[{i}]"))
    elif isinstance(value, bool):
        pass
    elif isinstance(value, int):
        found[path] = value
    return found


def compare(one, merged):
    """The differences of counts between two summaries, as lines (none: identical)."""
    a = {k: v for s in COUNT_SECTIONS if s in one for k, v in counts({s: one[s]}).items()}
    b = {k: v for s in COUNT_SECTIONS if s in merged for k, v in counts({s: merged[s]}).items()}
    lines = []
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            lines.append(f"{key}: one process {a.get(key)}, merged {b.get(key)}")
    return lines


def find_late_us(state):
    """The lateness in µs from a state file (run.start_late_us), if it records one."""
    late = state.get("run", {}).get("start_late_us")
    return late if isinstance(late, int) and not isinstance(late, bool) else None


def start_of(shard_dir):
    """(anchor text, lateness µs, where the lateness came from) of one shard."""
    with open(os.path.join(shard_dir, "summary.json")) as f:
        summary = json.load(f)
    late, source = None, "summary lag.min_us"
    state_path = os.path.join(shard_dir, "state.json")
    if os.path.exists(state_path):
        with open(state_path) as f:
            late = find_late_us(json.load(f))
        source = "state.json"
    if late is None:
        late = summary.get("phases", {}).get("lag", {}).get("min_us")
        source = "summary lag.min_us"
    return summary["run"]["started_at"], late, source


def main(argv):
    one_dir, merged_dir, max_skew_ms, shard_dirs = argv[1], argv[2], float(argv[3]), argv[4:]
    with open(os.path.join(one_dir, "summary.json")) as f:
        one = json.load(f)
    with open(os.path.join(merged_dir, "summary.json")) as f:
        merged = json.load(f)
    bad = compare(one, merged)
    n = len(counts({s: one[s] for s in COUNT_SECTIONS if s in one}))
    for line in bad:
        print(f"netns-e2e: differs: {line}")
    print(f"netns-e2e: {n} counts compared, {len(bad)} differ "
          f"({one['sessions']['started']} sessions one process, {merged['sessions']['started']} merged)")

    starts = [start_of(d) for d in shard_dirs]
    anchors = {a for a, _, _ in starts}
    lates = [late for _, late, _ in starts if late is not None]
    ok = not bad and one["sessions"]["started"] > 0
    if len(anchors) != 1:
        print(f"netns-e2e: the shards' anchors differ: {sorted(anchors)}")
        ok = False
    if len(lates) != len(starts):
        print("netns-e2e: a shard records no lateness: start skew unknown")
        ok = False
    else:
        skew_ms = (max(lates) - min(lates)) / 1000
        print(f"netns-e2e: start skew {skew_ms:.1f} ms between {len(starts)} shards "
              f"(lateness {', '.join(f'{x / 1000:.1f}' for x in lates)} ms after {next(iter(anchors))}, "
              f"from {starts[0][2]}); bound {max_skew_ms:g} ms")
        ok = ok and skew_ms < max_skew_ms
    print(f"netns-e2e: {1 if ok else 0} passed, {0 if ok else 1} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
