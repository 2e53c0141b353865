"""Drive `cove mcp` with the official Python MCP SDK (a client that is not
Cove's own), for crates/cove/tests/mcp.rs. Tested with mcp==2.3.0.

    client.py stdio COVE_BIN APP_DIR CALLS_JSON [cove mcp flags...]
    client.py http URL CALLS_JSON

CALLS_JSON is a list of {"name": tool, "arguments": {...}}; a call named
"read:URI" reads that resource instead, and "write:PATH" writes
arguments["text"] to the file PATH (an edit between two tool calls). Prints one JSON object: the tool and
resource names listed, then each call's outcome in order
({"name", "is_error", "text", "json"}), or {"fatal": message}.
"""

import asyncio
import json
import pathlib
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


async def session_run(read, write, calls):
    async with ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        resources = await session.list_resources()
        out = {
            "tools": {t.name: {"description": t.description, "input_schema": t.input_schema}
                      for t in tools.tools},
            "resources": [str(r.uri) for r in resources.resources],
            "calls": [],
        }
        for call in calls:
            name = call["name"]
            if name.startswith("write:"):
                path = pathlib.Path(name[len("write:"):])
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(call["arguments"]["text"])
                continue
            if name.startswith("read:"):
                try:
                    result = await session.read_resource(name[len("read:"):])
                    text = "".join(getattr(c, "text", "") for c in result.contents)
                    out["calls"].append({"name": name, "is_error": False, "text": text})
                except Exception as e:  # the error the server sent
                    out["calls"].append({"name": name, "is_error": True, "text": str(e)})
                continue
            result = await session.call_tool(name, call.get("arguments") or {})
            text = "".join(getattr(c, "text", "") for c in result.content)
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            out["calls"].append({"name": name, "is_error": bool(result.is_error),
                                 "text": text, "json": parsed})
        return out


async def main():
    mode = sys.argv[1]
    if mode == "stdio":
        cove, app, calls = sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
        params = StdioServerParameters(command=cove, args=["mcp", app, *sys.argv[5:]])
        async with stdio_client(params) as (read, write):
            return await session_run(read, write, calls)
    url, calls = sys.argv[2], json.loads(sys.argv[3])
    async with streamable_http_client(url) as streams:
        return await session_run(streams[0], streams[1], calls)


if __name__ == "__main__":
    try:
        print(json.dumps(asyncio.run(main())))
    except BaseException as e:  # noqa: BLE001 - reported to the Rust test
        print(json.dumps({"fatal": repr(e)}))
        sys.exit(1)
