#!/usr/bin/env python3
"""The MCP Inspector's CLI mode (npm `@modelcontextprotocol/inspector`, `mcp-inspector
--cli`) as a shell user drives it: one CLI call per method, each call its own session
(connect, initialize, the one request, close). For the mcp-fleet interop suite
(interop/record.sh); stdlib only.

    INSPECTOR=target/interop/npm-inspector/node_modules/.bin/mcp-inspector \\
      python3 inspector_client.py stdio -- CMD ARGS…
    … inspector_client.py http URL      Streamable HTTP (--transport http)
    … inspector_client.py sse URL       legacy HTTP+SSE (--transport sse)

The calls, in order (7 sessions): initialize, tools/list, resources/list, prompts/list
(the CLI walks every page itself), tools/call echo, resources/read of the first resource,
prompts/get of the first prompt with required arguments (else the first). The CLI has no
ping. The transport is given with --transport (not guessed from the URL's path), the
output asked as JSON (--format json), and HOME is INSPECTOR_HOME (default: a folder beside
the install) so the CLI's catalog and secret files never land in ~/.

Prints one JSON document (keys sorted, volatile values normalized) of what it saw; exits 1
with a message on stderr when a call fails, 2 when one takes more than 30 s
(MCP_CLIENT_TIMEOUT_S).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

LIMIT_S = float(os.environ.get("MCP_CLIENT_TIMEOUT_S", "30"))
ECHO_ARGS = {"message": "hello from the mcp-fleet interop suite"}


def fail(msg: str, code: int = 1) -> None:
    print(f"inspector_client: {msg}", file=sys.stderr)
    sys.exit(code)


def inspector() -> list[str]:
    exe = os.environ.get("INSPECTOR")
    if not exe:
        fail("set INSPECTOR to the mcp-inspector executable (node_modules/.bin/mcp-inspector)")
    return [exe]


def version(exe: str) -> str:
    # node_modules/.bin/mcp-inspector → node_modules/@modelcontextprotocol/inspector/package.json
    pkg = Path(exe).resolve().parents[3] / "package.json"
    try:
        return json.loads(pkg.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "unknown"


def call(kind: str, target: Any, method: str, *extra: str) -> Any:
    argv = inspector() + ["--cli", "--format", "json", "--method", method, *extra, "--transport", kind]
    argv += ["--", *target] if kind == "stdio" else ["--server-url", target]
    # Beside the install: PREFIX/node_modules/.bin/mcp-inspector → PREFIX/inspector-home.
    home = os.environ.get("INSPECTOR_HOME") or str(Path(argv[0]).parents[2] / "inspector-home")
    Path(home).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HOME=home)
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=LIMIT_S, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        fail(f"{method}: no answer after {LIMIT_S:.0f} s", 2)
    if p.returncode != 0:
        fail(f"{method}: mcp-inspector --cli exited {p.returncode}: {(p.stdout + p.stderr).strip()[-600:]}")
    try:
        out = json.loads(p.stdout)
    except ValueError:
        fail(f"{method}: not JSON on stdout: {p.stdout[:300]!r}")
    if "error" in out or "result" not in out:
        fail(f"{method}: {json.dumps(out)[:600]}")
    return out["result"]


VOLATILE = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I), "<uuid>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?"), "<time>"),
]


def canonical(v: Any) -> Any:
    if isinstance(v, list):
        return [canonical(x) for x in v]
    if isinstance(v, dict):
        return {k: canonical(x) for k, x in sorted(v.items()) if k != "_meta"}
    if isinstance(v, str):
        for pattern, to in VOLATILE:
            v = pattern.sub(to, v)
    return v


def main() -> int:
    argv = sys.argv[1:]
    if not argv or argv[0] not in ("stdio", "http", "sse"):
        fail("usage: inspector_client.py stdio -- CMD ARGS… | http URL | sse URL (the CLI has no WebSocket)")
    kind, rest = argv[0], argv[1:]
    if kind == "stdio":
        if len(rest) < 2 or rest[0] != "--":
            fail("stdio wants -- CMD ARGS…")
        target: Any = rest[1:]
    else:
        if len(rest) != 1:
            fail(f"{kind} wants one URL")
        target = rest[0]

    saw: dict[str, Any] = {
        "client": {"sdk": "@modelcontextprotocol/inspector --cli", "version": version(inspector()[0])},
        "transport": kind,
        "sessions": 7,
    }
    init = call(kind, target, "initialize")
    saw["server"] = init.get("serverInfo")
    saw["protocol_version"] = init.get("protocolVersion")
    caps = init.get("capabilities") or {}
    saw["server_capabilities"] = sorted(caps)

    tools = call(kind, target, "tools/list")["tools"] if "tools" in caps else []
    resources = call(kind, target, "resources/list")["resources"] if "resources" in caps else []
    prompts = call(kind, target, "prompts/list")["prompts"] if "prompts" in caps else []
    saw["tools"] = [t["name"] for t in tools]
    saw["resources"] = [r["uri"] for r in resources]
    saw["prompts"] = [p["name"] for p in prompts]

    if "echo" not in saw["tools"]:
        fail(f"no echo tool among {', '.join(saw['tools'])}")
    called = call(kind, target, "tools/call", "--tool-name", "echo", "--tool-args-json", json.dumps(ECHO_ARGS))
    saw["tool_call"] = {
        "name": "echo",
        "arguments": ECHO_ARGS,
        "content": called.get("content"),
        "isError": called.get("isError", False),
        "structuredContent": called.get("structuredContent"),
    }
    if resources:
        uri = resources[0]["uri"]
        saw["resource_read"] = {"uri": uri, "contents": call(kind, target, "resources/read", "--uri", uri)["contents"]}
    if prompts:
        prompt = next((p for p in prompts if any(a.get("required") for a in p.get("arguments") or [])), prompts[0])
        args = {a["name"]: "fleet" for a in prompt.get("arguments") or [] if a.get("required")}
        extra = ["--prompt-name", prompt["name"]]
        if args:
            extra += ["--prompt-args", *(f"{k}={v}" for k, v in args.items())]
        got = call(kind, target, "prompts/get", *extra)
        saw["prompt_get"] = {
            "name": prompt["name"],
            "arguments": args,
            "description": got.get("description"),
            "messages": got["messages"],
        }
    else:
        saw["sessions"] -= 1
    if not resources:
        saw["sessions"] -= 1
    saw["ping"] = "not sent: the CLI has no ping method"
    sys.stdout.write(json.dumps(canonical(saw), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
