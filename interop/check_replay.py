#!/usr/bin/env python3
"""Assertions on `mcp-fleet record` traces and what `replay` and a profile run made of
them (stdlib only), for interop/record.sh.

    check_replay.py trace T.jsonl… [--sessions N] [--partial-ok]
        Each file is a whole trace (a header of format `mcp-fleet-trace`, an `end` line
        last, unless --partial-ok); together they hold N sessions (when given), each with
        client requests.
    check_replay.py replay T.jsonl DIR
        DIR is `mcp-fleet replay T.jsonl --out DIR`'s results folder. Per method the
        client sent as a request (the trace's `message` lines `"from":"client"` with an
        id; not initialize, not server/discover), the replay has a phase (or a `requests`
        step) of that name with as many samples (one per page for lists: the same server
        pages the same way). A method-named phase the client never sent is a mismatch
        too (a list the replay refetched after list_changed when the client did not, say).
        The replay's sessions all completed, and every recorded clientInfo is the
        client_info of a persona of DIR/profile.toml.
    check_replay.py run DIR --sessions N
        A profile run's results: N sessions completed, none failed or interrupted.

Prints one line: what matched on success, every mismatch on failure. Exit 0 = pass.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

HANDSHAKE = {"initialize", "server/discover"}
LISTS = {"tools/list", "resources/list", "resources/templates/list", "prompts/list"}
# Phases of mcp-fleet's that are named after a method (others: connect, initialize,
# initialized, close, session, answer, probe, discover, …).
METHOD_PHASES = LISTS | {"tools/call", "resources/read", "prompts/get", "ping", "completion/complete",
                         "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
                         "subscriptions/listen", "tasks/get", "tasks/result", "tasks/cancel", "tasks/list"}
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"


class Problem(Exception):
    pass


def read_trace(path: Path) -> dict[str, Any]:
    """The trace's header, its sessions' client requests and clientInfo, and its end."""
    try:
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except (OSError, ValueError) as e:
        raise Problem(f"{path.name}: not readable JSON lines: {e}") from e
    if not lines or lines[0].get("format") != "mcp-fleet-trace":
        raise Problem(f"{path.name}: no mcp-fleet-trace header line")
    end = lines[-1] if lines[-1].get("kind") == "end" else None
    sessions: dict[int, dict[str, Any]] = {}
    for e in lines[1:]:
        if "session" not in e:
            continue
        s = sessions.setdefault(e["session"], {"requests": [], "client_info": None, "transport": None})
        if e.get("kind") == "open":
            s["transport"] = e.get("transport")
        if e.get("kind") != "message" or e.get("from") != "client":
            continue
        m = e.get("message") or {}
        method = m.get("method")
        if method is None or "id" not in m:
            continue  # a notification, or the client's answer to a server request
        params = m.get("params") or {}
        if method == "initialize" and s["client_info"] is None:
            s["client_info"] = params.get("clientInfo")
        meta = params.get("_meta") or {}
        if s["client_info"] is None and META_CLIENT_INFO in meta:
            s["client_info"] = meta[META_CLIENT_INFO]
        if method not in HANDSHAKE:
            s["requests"].append(method)
    return {"header": lines[0], "end": end, "sessions": sessions}


def count(summary: dict[str, Any], method: str) -> int:
    for table in ("phases", "requests"):
        entry = (summary.get(table) or {}).get(method)
        if entry:
            return int(entry.get("count", 0))
    return 0


def cmd_trace(a: argparse.Namespace) -> str:
    problems, sessions, requests, cut = [], 0, 0, 0
    for p in a.traces:
        t = read_trace(Path(p))
        if t["end"] is None and a.partial_ok:
            cut += 1
        elif t["end"] is None:
            problems.append(f"{Path(p).name}: no end line (the recording did not end whole)")
        elif t["end"].get("sessions") not in (None, len(t["sessions"])):
            problems.append(f"{Path(p).name}: end line says {t['end'].get('sessions')} sessions, "
                            f"{len(t['sessions'])} recorded")
        for n, s in sorted(t["sessions"].items()):
            if not s["requests"] and s["client_info"] is None:
                problems.append(f"{Path(p).name}: session {n} has no client request")
        sessions += len(t["sessions"])
        requests += sum(len(s["requests"]) for s in t["sessions"].values())
    if a.sessions is not None and sessions != a.sessions:
        problems.append(f"{sessions} sessions recorded (want {a.sessions})")
    if problems:
        raise Problem("; ".join(problems))
    return (f"{sessions} session{'s' * (sessions != 1)}, {requests} requests recorded"
            + (f" ({cut} trace{'s' * (cut != 1)} cut short)" if cut else ""))


def cmd_replay(a: argparse.Namespace) -> str:
    t = read_trace(Path(a.trace))
    out = Path(a.dir)
    try:
        summary = json.loads((out / "summary.json").read_text())
    except (OSError, ValueError) as e:
        raise Problem(f"no readable {out / 'summary.json'}: {e}") from e
    problems = []

    recorded = Counter(m for s in t["sessions"].values() for m in s["requests"])
    for method in sorted(set(recorded) | METHOD_PHASES):
        want, got = recorded.get(method, 0), count(summary, method)
        if got != want:
            problems.append(f"{method}: {got} replayed, {want} recorded")
    refetch = int((summary.get("counters") or {}).get("list_refetch", 0))
    if problems and refetch:
        problems.append(f"(the replay refetched {refetch} list(s) after the server's list_changed: "
                        f"counter list_refetch)")

    sess = summary.get("sessions") or {}
    if sess.get("failed", 0) or sess.get("interrupted", 0) or not sess.get("completed"):
        problems.append(f"replay sessions completed={sess.get('completed')} failed={sess.get('failed')} "
                        f"interrupted={sess.get('interrupted')}: {json.dumps(summary.get('failures') or {})}")

    infos = [s["client_info"] for s in t["sessions"].values() if s["client_info"] is not None]
    try:
        profile = tomllib.loads((out / "profile.toml").read_text())
    except (OSError, ValueError) as e:
        problems.append(f"no readable {out / 'profile.toml'}: {e}")
        profile = {}
    personas = [p.get("client_info") for p in profile.get("persona", []) if isinstance(p, dict)]
    for info in {json.dumps(i, sort_keys=True) for i in infos}:
        want = json.loads(info)
        if not any(isinstance(p, dict) and all(p.get(k) == v for k, v in want.items()) for p in personas):
            problems.append(f"clientInfo {info} is no persona's client_info (personas: {json.dumps(personas)})")
    if not infos:
        problems.append("the trace has no clientInfo")

    if problems:
        raise Problem("; ".join(problems))
    seen = ", ".join(f"{m}×{n}" for m, n in sorted(recorded.items()))
    names = sorted({f"{i.get('name')}/{i.get('version')}" for i in infos})
    return f"replayed {len(t['sessions'])} session(s) as recorded ({seen}), clientInfo {', '.join(names)}"


def cmd_run(a: argparse.Namespace) -> str:
    path = Path(a.dir) / "summary.json"
    try:
        s = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise Problem(f"no readable {path}: {e}") from e
    sess = s.get("sessions") or {}
    if sess.get("completed") != a.sessions or sess.get("failed", 0) or sess.get("interrupted", 0):
        raise Problem(f"profile run: completed={sess.get('completed')} (want {a.sessions}) "
                      f"failed={sess.get('failed')} interrupted={sess.get('interrupted')}: "
                      f"{json.dumps(s.get('failures') or {})}")
    return f"profile run {sess.get('completed')}/{a.sessions} sessions, {sess.get('rate_per_s', 0):.1f}/s"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("trace")
    t.add_argument("traces", nargs="+")
    t.add_argument("--sessions", type=int)
    t.add_argument("--partial-ok", action="store_true",
                   help="a trace without its end line is no failure (the client killed the recorder)")
    r = sub.add_parser("replay")
    r.add_argument("trace")
    r.add_argument("dir")
    n = sub.add_parser("run")
    n.add_argument("dir")
    n.add_argument("--sessions", type=int, required=True)
    a = ap.parse_args()
    try:
        print({"trace": cmd_trace, "replay": cmd_replay, "run": cmd_run}[a.cmd](a))
    except Problem as e:
        print(e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
