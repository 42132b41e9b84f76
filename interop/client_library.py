#!/usr/bin/env python3
"""Write profiles/clients/ (the persona library) from the interop suite's recordings.

interop/record.sh records each real SDK client through `mcp-fleet record` and derives a
profile from the trace (`mcp-fleet profile --from-trace`); this takes each client's
persona from its Streamable HTTP recording — the one against server-everything when
there the client probed and fell back (its `auto` mode shows only there), else the one
against our reference server — and keeps what describes the client, not the run:
identity, version and era, capabilities, transport habits. One file per client.

    MCP_FLEET=target/release/mcp-fleet INTEROP_ONLY='^record-.*-http$' interop/run.sh
    python3 interop/client_library.py target/interop/results profiles/clients
"""
import sys
import tomllib
from pathlib import Path

# library name, interop client, what it is (the pins are interop/record.sh's)
CLIENTS = [
    ("ts-sdk-1", "ts1", "the official TypeScript SDK v1 client, @modelcontextprotocol/sdk 1.32.2 (it has no default\n# clientInfo: the name is the one interop/clients/ts_client.mjs gives itself)"),
    ("ts-sdk-2", "ts2", "the official TypeScript SDK v2 client, @modelcontextprotocol/client 2.4.0 (it has no default\n# clientInfo: the name is the one interop/clients/ts_client.mjs gives itself)"),
    ("python-sdk-1", "py1", "the official Python SDK 1.x client, mcp 1.30.0 (ClientSession; mcp/0.1.0 is its\n# default clientInfo)"),
    ("python-sdk-2", "py2", "the official Python SDK 2.x client, mcp 2.3.0 (Client, its default mode=\"auto\": a\n# server/discover probe, then initialize if the server is legacy)"),
    ("inspector-cli", "inspector", "the MCP Inspector's CLI mode, @modelcontextprotocol/inspector 2.12.0"),
]
# What describes the client (the rest — transport, path, weight, scenarios — is the run's).
KEEP = ["era", "protocol_version", "legacy_version", "get_stream", "abandon", "client_info",
        "capabilities", "extensions"]


def persona_of(results: Path, client: str):
    chosen = None
    for server in ("everything", "ref"):
        path = results / f"record-{client}-{server}-http" / "profile.toml"
        if not path.is_file():
            continue
        with open(path, "rb") as f:
            persona = tomllib.load(f)["persona"][0]
        if chosen is None or persona.get("era") == "auto":
            chosen = (persona, server)
        if persona.get("era") == "auto":
            break
    return chosen


def value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in sorted(v.items())) + " }" if v else "{}"
    raise TypeError(v)


def key(k):
    return k if k.replace("_", "").replace("-", "").isalnum() else value(k)


def main():
    results, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for name, client, what in CLIENTS:
        found = persona_of(results, client)
        if found is None:
            sys.exit(f"{name}: no recording of {client} over Streamable HTTP in {results}")
        persona, server = found
        server_name = "server-everything" if server == "everything" else "the reference server"
        lines = [
            f"# {name}: {what}.",
            f"# Recorded through `mcp-fleet record` against {server_name} over Streamable HTTP, the",
            "# client as its users get it by default (interop/clients/); regenerate with",
            "# interop/client_library.py (its docstring). Use it from a profile:",
            f"#   [[persona]]\n#   name = \"my-{name}\"\n#   from = \"{name}\"",
            "",
            "[[persona]]",
            f"name = \"{name}\"",
        ]
        for k in KEEP:
            if k in persona:
                lines.append(f"{k} = {value(persona[k])}")
        (out / f"{name}.toml").write_text("\n".join(lines) + "\n")
        print(f"{name}: from record-{client}-{server}-http")


if __name__ == "__main__":
    main()
