"""A small MCP server on the official Python SDK, for the mcp-fleet interop suite.

Runs on `mcp` 1.x (`FastMCP`) and 2.x (`MCPServer`, which also answers the
2026-07-28 stateless era on Streamable HTTP).

    python python_server.py stdio
    python python_server.py streamable-http PORT [--stateless]
    python python_server.py sse PORT

PORT may also come from the environment (`PORT`). HTTP transports listen on
127.0.0.1 only. Tools: `echo(message)`, `add(a, b)`; prompt `greeting(name)`;
resources `fleet://info` and template `fleet://items/{item_id}`.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import version

SDK_VERSION = version("mcp")
MAJOR = int(SDK_VERSION.split(".")[0])
HOST = "127.0.0.1"

if MAJOR >= 2:
    from mcp.server.mcpserver import MCPServer as _Server
else:
    from mcp.server.fastmcp import FastMCP as _Server


def build(port: int, stateless: bool):
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

    return server


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] not in ("stdio", "streamable-http", "sse"):
        sys.exit(__doc__)
    transport = argv[1]
    stateless = "--stateless" in argv
    rest = [a for a in argv[2:] if not a.startswith("--")]
    port = int(rest[0]) if rest else int(os.environ.get("PORT", "8000"))
    server = build(port, stateless)
    if transport == "stdio":
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
