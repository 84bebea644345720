"""A small MCP server built with the SDK, for the tests: every call is appended to the file `ECHO_LOG` names,
so a test can see whether the server was called at all."""

import base64
import json
import os
import stat
import sys
import time

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

# The smallest valid PNG: one red pixel.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")

app = MCPServer("echo")


def logged(name: str, arguments: dict) -> None:
    path = os.environ.get("ECHO_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"tool": name, "arguments": arguments, "pid": os.getpid()}) + "\n")


@app.tool()
def echo(text: str) -> str:
    """Say the text back."""
    logged("echo", {"text": text})
    return f"echo: {text}"


@app.tool()
def slow(seconds: float) -> str:
    """Wait, then answer."""
    logged("slow", {"seconds": seconds})
    time.sleep(seconds)
    return "finally"


@app.tool()
def crash() -> str:
    """Exit in the middle of the call."""
    logged("crash", {})
    os._exit(3)


@app.tool()
def garbage() -> str:
    """Write something that is not JSON-RPC where the protocol goes."""
    logged("garbage", {})
    # The SDK moves the protocol's pipe off descriptor 1 (so prints cannot corrupt it): write to that pipe.
    for fd in range(3, 64):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, b"this is not json\n")
        except OSError:
            continue
    time.sleep(30)
    return "unreachable"


@app.tool()
def picture() -> list:
    """A one-pixel image and a caption."""
    from mcp.server.mcpserver.utilities.types import Image

    logged("picture", {})
    return ["a red pixel", Image(data=PIXEL, format="png")]


@app.tool()
def where() -> str:
    """What this process can see: its working directory and whether it may write outside the project."""
    logged("where", {})
    outside = "/var/tmp/opencode-nb-mcp-escape"
    try:
        with open(outside, "w") as out:
            out.write("escaped")
        wrote = True
    except OSError:
        wrote = False
    return json.dumps({"cwd": os.getcwd(), "wrote_outside": wrote, "secret": os.environ.get("ECHO_SECRET", "")})


@app.tool()
def fetch(url: str) -> str:
    """GET a URL (through the proxy the environment names, if any) and return the body or the error."""
    import urllib.request

    logged("fetch", {"url": url})
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.read().decode()
    except Exception as exc:
        return f"failed: {exc}"


@app.tool()
async def grow(ctx: Context) -> str:
    """Add a tool named `fresh` and tell the client its tool list changed."""
    logged("grow", {})
    app.add_tool(lambda: "fresh!", name="fresh", description="A tool added while running.")
    await ctx.session.send_tool_list_changed()
    return "grown"


if __name__ == "__main__":
    logged("started", {})
    if len(sys.argv) > 1 and sys.argv[1] == "http":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) > 1 and sys.argv[1] == "sse":
        app.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()
