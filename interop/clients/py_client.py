#!/usr/bin/env python3
"""One MCP session, written the way a user of the official Python SDK (PyPI `mcp`) writes
one, for mcp 1.x and 2.x alike (run it with either venv's python). For the mcp-fleet
interop suite (interop/record.sh): the same run directly against a server and through
`mcp-fleet record` must print the same bytes.

    python py_client.py stdio -- CMD ARGS…
    python py_client.py http URL      Streamable HTTP
    python py_client.py sse URL       legacy HTTP+SSE
    python py_client.py ws URL        WebSocket (1.x only, `mcp[ws]`; 2.x removed it)

mcp 1.x: a transport context manager (`stdio_client`, `streamable_http_client`,
`sse_client`, `websocket_client`) and a `ClientSession` on its streams, `initialize()`.
mcp 2.x: `Client(URL | StdioServerParameters | sse_client(URL))` with its defaults, so
`mode="auto"`: it probes `server/discover` and falls back to `initialize` on a
2025-era server (a dual-era server gets a 2026-07-28 session).

The session: list tools, resources and prompts page by page (where the server declares
them), call `echo`, read the first resource, get the first prompt with required arguments
(else the first), ping, leave the context managers (Streamable HTTP: DELETE). Callbacks,
which is how this SDK declares capabilities: roots (one root), sampling (a fixed
answer), elicitation (declined). clientInfo: the SDK's default (`mcp` / `0.1.0`).

Prints one JSON document (keys sorted, volatile values normalized) of what the client
saw; exits 1 with a message on stderr on any failure, 2 after 30 s (MCP_CLIENT_TIMEOUT_S).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import signal
import sys
import traceback
from contextlib import AsyncExitStack
from typing import Any

import anyio

LIMIT_S = float(os.environ.get("MCP_CLIENT_TIMEOUT_S", "30"))
MCP_VERSION = importlib.metadata.version("mcp")
V2 = MCP_VERSION.split(".")[0] != "1"

from mcp import types  # noqa: E402
from mcp.client.session import DEFAULT_CLIENT_INFO  # noqa: E402
from mcp.client.sse import sse_client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

if V2:
    from mcp import Client
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS as MODERN
else:
    MODERN = ()
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

ROOT = types.Root(uri="file:///tmp/mcp-fleet-interop", name="interop")
ECHO_ARGS = {"message": "hello from the mcp-fleet interop suite"}


async def list_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[ROOT])


async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant",
        model="fixed-model",
        stopReason="endTurn",
        content=types.TextContent(type="text", text="fixed answer from the python sdk client"),
    )


async def elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


CALLBACKS = dict(list_roots_callback=list_roots, sampling_callback=sampling, elicitation_callback=elicitation)


def dump(model: Any) -> Any:
    """A result as JSON, without the SDK's unset optional fields."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def all_pages(list_page: Any, key: str) -> tuple[list[Any], int]:
    items: list[Any] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = await list_page(cursor)
        pages += 1
        items.extend(getattr(page, key))
        cursor = page.next_cursor if V2 else page.nextCursor  # 2.x: snake_case fields
        if cursor is None:
            return items, pages
        if pages > 1000:
            raise RuntimeError(f"{key}: more than 1000 pages")


async def exercise(api: Any, saw: dict[str, Any], caps: types.ServerCapabilities) -> None:
    """The session's requests; `api` is a 1.x ClientSession or a 2.x Client (same verbs)."""
    saw["server_capabilities"] = sorted(k for k, v in dump(caps).items() if v is not None)
    saw["pages"] = {}
    tools: list[types.Tool] = []
    resources: list[types.Resource] = []
    prompts: list[types.Prompt] = []
    if caps.tools is not None:
        tools, saw["pages"]["tools"] = await all_pages(lambda c: api.list_tools(cursor=c), "tools")
    if caps.resources is not None:
        resources, saw["pages"]["resources"] = await all_pages(lambda c: api.list_resources(cursor=c), "resources")
    if caps.prompts is not None:
        prompts, saw["pages"]["prompts"] = await all_pages(lambda c: api.list_prompts(cursor=c), "prompts")
    saw["tools"] = [t.name for t in tools]
    saw["resources"] = [str(r.uri) for r in resources]
    saw["prompts"] = [p.name for p in prompts]

    if "echo" not in saw["tools"]:
        raise RuntimeError(f"no echo tool among {', '.join(saw['tools'])}")
    called = dump(await api.call_tool("echo", ECHO_ARGS))
    saw["tool_call"] = {
        "name": "echo",
        "arguments": ECHO_ARGS,
        "content": called.get("content"),
        "isError": called.get("isError", False),
        "structuredContent": called.get("structuredContent"),
    }
    if resources:
        uri = str(resources[0].uri)
        read = dump(await api.read_resource(resources[0].uri))
        saw["resource_read"] = {"uri": uri, "contents": read["contents"]}
    if prompts:
        prompt = next((p for p in prompts if any(a.required for a in p.arguments or [])), prompts[0])
        args = {a.name: "fleet" for a in prompt.arguments or [] if a.required}
        got = dump(await api.get_prompt(prompt.name, args))
        saw["prompt_get"] = {
            "name": prompt.name,
            "arguments": args,
            "description": got.get("description"),
            "messages": got["messages"],
        }
    if saw["protocol_version"] in MODERN:
        saw["ping"] = "not sent: 2026-07-28 has no ping"
    else:
        await api.send_ping()
        saw["ping"] = "ok"


def stdio_params(cmd: list[str]) -> StdioServerParameters:
    return StdioServerParameters(command=cmd[0], args=cmd[1:])


async def session_v1(kind: str, target: Any, saw: dict[str, Any]) -> None:
    async with AsyncExitStack() as stack:
        if kind == "stdio":
            read, write = await stack.enter_async_context(stdio_client(stdio_params(target)))
        elif kind == "http":
            read, write, _session_id = await stack.enter_async_context(streamable_http_client(target))
        elif kind == "sse":
            read, write = await stack.enter_async_context(sse_client(target))
        else:
            from mcp.client.websocket import websocket_client

            read, write = await stack.enter_async_context(websocket_client(target))
        session = await stack.enter_async_context(ClientSession(read, write, **CALLBACKS))
        init = await session.initialize()
        saw["server"] = dump(init.serverInfo)
        saw["protocol_version"] = init.protocolVersion
        await exercise(session, saw, init.capabilities)


async def session_v2(kind: str, target: Any, saw: dict[str, Any]) -> None:
    if kind == "stdio":
        server: Any = stdio_params(target)
    elif kind == "http":
        server = target
    elif kind == "sse":
        server = sse_client(target)
    else:
        raise SystemExit(f"py_client: mcp {MCP_VERSION} has no WebSocket client transport")
    async with Client(server, **CALLBACKS) as client:
        saw["mode"] = "auto"  # Client's default
        saw["server"] = dump(client.server_info) if client.server_info is not None else None
        saw["protocol_version"] = client.protocol_version
        await exercise(client, saw, client.server_capabilities)


VOLATILE = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I), "<uuid>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?"), "<time>"),
]


def canonical(v: Any) -> Any:
    if isinstance(v, list):
        return [canonical(x) for x in v]
    if isinstance(v, dict):
        # `_meta`: per-response metadata (timings, ids, cache hints).
        return {k: canonical(x) for k, x in sorted(v.items()) if k != "_meta"}
    if isinstance(v, str):
        for pattern, to in VOLATILE:
            v = pattern.sub(to, v)
    return v


# What mcp 1.x's stdio_client raises when a server message arrives during its close.
CLOSING_RACE = ("BrokenResourceError", "ClosedResourceError")


def leaves(e: BaseException) -> list[str]:
    """The errors inside anyio's exception groups, each as `Type: message`."""
    if isinstance(e, BaseExceptionGroup):
        return [x for sub in e.exceptions for x in leaves(sub)]
    return [f"{type(e).__name__}: {e}"]


def usage(why: str) -> None:
    print(f"py_client: {why}\nusage: py_client.py stdio -- CMD ARGS… | http URL | sse URL | ws URL", file=sys.stderr)
    sys.exit(1)


def main() -> int:
    argv = sys.argv[1:]
    if not argv:
        usage("no transport")
    kind, rest = argv[0], argv[1:]
    if kind == "stdio":
        if len(rest) < 2 or rest[0] != "--":
            usage("stdio wants -- CMD ARGS…")
        target: Any = rest[1:]
    elif kind in ("http", "sse", "ws"):
        if len(rest) != 1:
            usage(f"{kind} wants one URL")
        target = rest[0]
    else:
        usage(f"unknown transport {kind}")

    # A backstop for a close that hangs past the async deadline below.
    def give_up(*_: Any) -> None:
        print(f"py_client: no result after {LIMIT_S:.0f} s, giving up", file=sys.stderr)
        os._exit(2)

    signal.signal(signal.SIGALRM, give_up)
    signal.alarm(int(LIMIT_S) + 5)

    saw: dict[str, Any] = {
        # The clientInfo the SDK sends when given none (this client gives none).
        "client": {"sdk": "mcp (PyPI)", "version": MCP_VERSION, "client_info": dump(DEFAULT_CLIENT_INFO)},
        "transport": kind,
    }

    async def run() -> None:
        with anyio.fail_after(LIMIT_S):
            await (session_v2 if V2 else session_v1)(kind, target, saw)

    try:
        anyio.run(run)
    except TimeoutError:
        give_up()
    except BaseException as e:  # noqa: BLE001 - any failure is the client's failure
        if isinstance(e, SystemExit):
            raise
        if "ping" in saw and all(x.startswith(CLOSING_RACE) for x in leaves(e)):
            # mcp 1.x's stdio_client: a server message that arrives while the client closes
            # (server-everything's roots/list, sent 350 ms after `initialized`) is handed to
            # the closed read stream, and the error escapes the context manager. The
            # session's work was done; said on stderr, not in the output (timing-dependent).
            print(f"py_client (mcp {MCP_VERSION}, {kind}): known SDK quirk on close: {'; '.join(leaves(e))}",
                  file=sys.stderr)
            signal.alarm(0)
            sys.stdout.write(json.dumps(canonical(saw), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
            return 0
        print(f"py_client (mcp {MCP_VERSION}, {kind}): {'; '.join(leaves(e))}", file=sys.stderr)
        if os.environ.get("MCP_CLIENT_DEBUG"):
            traceback.print_exc(file=sys.stderr)
        return 1
    signal.alarm(0)
    sys.stdout.write(json.dumps(canonical(saw), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
