"""A small MCP server on the official Python SDK, for the mcp-fleet interop suite.

Runs on `mcp` 1.x (`FastMCP`) and 2.x (`MCPServer`, which also answers the
2026-07-28 stateless era on Streamable HTTP).

    python python_server.py stdio
    python python_server.py streamable-http PORT [--stateless]
    python python_server.py sse PORT
    python python_server.py websocket PORT       (mcp 1.x: its WebSocket transport at /ws)
    python python_server.py streamable-http PORT --auth-tokens FILE   (mcp 1.x)
    python python_server.py streamable-http PORT --change-tool       (mcp 2.x)

PORT may also come from the environment (`PORT`). HTTP transports listen on
127.0.0.1 only. Tools: `echo(message)`, `add(a, b)`; prompt `greeting(name)`;
resources `fleet://info` and template `fleet://items/{item_id}`.

With `--change-tool` (mcp 2.x) the server also has `notify_list_changed(list)`, which
announces a change of a list through the SDK's own `subscriptions/listen` bus
(`ctx.notify_tools_changed()`), for the listen checks.

With `--auth-tokens FILE` (one token a line) the server is an OAuth protected resource
through the SDK's own auth support (`token_verifier` + `AuthSettings`): requests without
one of the tokens get the SDK's 401 with `WWW-Authenticate`, and it serves its protected
resource metadata.

Tools whose parameters the SDK turns into the schemas real servers publish (pydantic
models → `$defs`/`$ref`, `Annotated[..., Field(...)]` → pattern, bounds, multipleOf,
an `Enum`, `Optional[int] = None` → `anyOf` with null, `datetime.time` → format time),
and which the SDK validates itself: `plan_task(task)`, `book(code, seats, at)`,
`order(quantity, boxes)`, `schedule(when, day, repeat, note)`.
"""

from __future__ import annotations

import datetime
import os
import sys
from enum import Enum
from importlib.metadata import version
from typing import Annotated, Optional

from pydantic import BaseModel, Field

SDK_VERSION = version("mcp")
MAJOR = int(SDK_VERSION.split(".")[0])
HOST = "127.0.0.1"

if MAJOR >= 2:
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as _Server
else:
    from mcp.server.fastmcp import FastMCP as _Server


class Priority(str, Enum):
    low = "low"
    medium = "medium"
    high = "high"


class Task(BaseModel):
    """A task to plan: a model argument, so its schema sits in `$defs`."""

    title: Annotated[str, Field(min_length=1, max_length=80)]
    priority: Priority
    estimate: Optional[int] = None


Code = Annotated[str, Field(pattern=r"^[A-Z]{3}-\d{4}$", description="e.g. ABC-1234")]


def add_argument_tools(server) -> None:
    """The tools of `python-arguments.toml`: the SDK checks their arguments."""

    @server.tool()
    def plan_task(task: Task) -> str:
        """Plan a task (a pydantic model with an enum and an optional estimate)."""
        estimate = "no estimate" if task.estimate is None else f"{task.estimate} h"
        return f"planned {task.title!r}: {task.priority.value}, {estimate}"

    @server.tool()
    def book(code: Code, seats: Annotated[int, Field(ge=1, le=9)], at: datetime.time) -> str:
        """Book seats on a departure, by code and time of day."""
        return f"booked {seats} on {code} at {at.isoformat()}"

    @server.tool()
    def order(
        quantity: Annotated[float, Field(gt=0, le=100, multiple_of=0.25)],
        boxes: Annotated[int, Field(ge=5, le=500, multiple_of=5)],
    ) -> str:
        """Order a quantity in quarter units, packed in boxes of five."""
        return f"ordered {quantity} in {boxes} boxes"

    @server.tool()
    def schedule(
        when: datetime.datetime,
        day: datetime.date,
        repeat: Annotated[int, Field(ge=0, le=10)] = 0,
        note: Optional[str] = None,
    ) -> str:
        """Schedule something at a date-time, from a day on."""
        return f"scheduled {when.isoformat()} from {day.isoformat()} x{repeat}" + (
            f" ({note})" if note else ""
        )


def auth_kwargs(port: int, tokens_file: str | None) -> dict:
    """The SDK's resource-server auth: a verifier that knows the file's tokens."""
    if tokens_file is None:
        return {}
    from mcp.server.auth.provider import AccessToken
    from mcp.server.auth.settings import AuthSettings

    with open(tokens_file, encoding="utf-8") as f:
        tokens = {line.strip() for line in f if line.strip() and not line.startswith("#")}

    class FileTokens:
        async def verify_token(self, token: str) -> AccessToken | None:
            if token not in tokens:
                return None
            return AccessToken(token=token, client_id="mcp-fleet", scopes=["mcp"])

    base = f"http://{HOST}:{port}"
    settings = AuthSettings(
        issuer_url=base,
        resource_server_url=f"{base}/mcp",
        required_scopes=["mcp"],
        validate_token_resource=False,
    )
    return {"token_verifier": FileTokens(), "auth": settings}


def build(port: int, stateless: bool, tokens_file: str | None = None, change_tool: bool = False):
    if MAJOR >= 2:
        server = _Server("fleet-interop-python", version=SDK_VERSION, log_level="WARNING")
    else:
        # 1.x takes the HTTP settings in the constructor.
        server = _Server(
            "fleet-interop-python",
            host=HOST,
            port=port,
            stateless_http=stateless,
            log_level="WARNING",
            **auth_kwargs(port, tokens_file),
        )

    @server.tool()
    def echo(message: str) -> str:
        """Echo the message back."""
        return f"Echo: {message}"

    @server.tool()
    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    @server.prompt()
    def greeting(name: str) -> str:
        """Greet someone by name."""
        return f"Please greet {name} warmly."

    @server.resource("fleet://info", mime_type="text/plain")
    def info() -> str:
        """What this server is."""
        return f"fleet-interop-python on mcp {SDK_VERSION}"

    @server.resource("fleet://items/{item_id}", mime_type="text/plain")
    def item(item_id: str) -> str:
        """One item, by id."""
        return f"item {item_id}"

    add_argument_tools(server)
    if change_tool:

        @server.tool()
        async def notify_list_changed(ctx: Context, list: str = "tools") -> str:
            """Announce a change of a list (tools, prompts, resources) to every listen
            (2026-07-28); named as the mcp-fleet reference server's tool, so the fleet's
            list-changed storms work here too."""
            if list == "prompts":
                await ctx.notify_prompts_changed()
            elif list == "resources":
                await ctx.notify_resources_changed()
            else:
                await ctx.notify_tools_changed()
            return "changed"

    if tokens_file is not None:
        add_issuer_metadata(server, port)
    return server


def add_issuer_metadata(server, port: int) -> None:
    """The SDK serves the protected resource metadata, which names this host as the
    authorization server; serve that server's metadata (RFC 8414) too, so the discovery
    walk ends. Clients get their tokens from the file, so the token endpoint is a stub."""
    from starlette.responses import JSONResponse

    base = f"http://{HOST}:{port}"

    @server.custom_route("/.well-known/oauth-authorization-server", methods=["GET"])
    async def issuer_metadata(request):
        return JSONResponse({
            "issuer": f"{base}/",
            "token_endpoint": f"{base}/token",
            "response_types_supported": ["token"],
            "grant_types_supported": ["client_credentials"],
        })


def serve_websocket(server, port: int) -> None:
    """mcp 1.x's WebSocket transport (`mcp.server.websocket`, subprotocol `mcp`, needs
    `mcp[ws]`), at ws://127.0.0.1:PORT/ws: each connection one session of the server.
    The SDK deprecates it (WebSocket is not an MCP transport); servers still ship it."""
    import warnings

    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute

    # The SDK warns on every connection that the transport is deprecated: once is known.
    warnings.simplefilter("ignore", DeprecationWarning)
    from mcp.server.websocket import websocket_server

    low = server._mcp_server

    async def endpoint(websocket):
        async with websocket_server(websocket.scope, websocket.receive, websocket.send) as (read, write):
            await low.run(read, write, low.create_initialization_options())

    app = Starlette(routes=[WebSocketRoute("/ws", endpoint)])
    uvicorn.run(app, host=HOST, port=port, log_level="warning", ws="websockets-sansio")


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] not in ("stdio", "streamable-http", "sse", "websocket"):
        sys.exit(__doc__)
    transport = argv[1]
    stateless = "--stateless" in argv
    tokens_file = None
    if "--auth-tokens" in argv:
        i = argv.index("--auth-tokens")
        if i + 1 >= len(argv) or MAJOR >= 2:
            sys.exit("--auth-tokens FILE (mcp 1.x only)")
        tokens_file = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    rest = [a for a in argv[2:] if not a.startswith("--")]
    port = int(rest[0]) if rest else int(os.environ.get("PORT", "8000"))
    if transport == "websocket" and MAJOR >= 2:
        sys.exit("websocket: mcp 1.x only (2.x removed the transport)")
    change_tool = "--change-tool" in argv
    if change_tool and MAJOR < 2:
        sys.exit("--change-tool: mcp 2.x only (1.x has no subscriptions/listen)")
    server = build(port, stateless, tokens_file, change_tool)
    if transport == "websocket":
        serve_websocket(server, port)
    elif transport == "stdio":
        server.run("stdio")
    elif MAJOR >= 2:
        kwargs = {"host": HOST, "port": port}
        if transport == "streamable-http":
            kwargs["stateless_http"] = stateless
        server.run(transport, **kwargs)
    else:
        server.run(transport)


if __name__ == "__main__":
    main(sys.argv)
