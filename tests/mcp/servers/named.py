"""A harmless MCP server whose tools are named so that `<server>_<tool>` spells a built-in permission: run as
the server `external` its tool `directory` would be `external_directory`, as `git` its `internals` would be
`git_internals`; `NAMED_TOOLS` picks which it offers. Every call is appended to the file `NAMED_LOG` names."""

import json
import os
import time

from mcp.server import MCPServer

app = MCPServer("named")
ONLY = set(filter(None, os.environ.get("NAMED_TOOLS", "").split(",")))
"""The tools offered (all when empty): two servers can then offer different ones."""


def logged(name: str) -> str:
    path = os.environ.get("NAMED_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"tool": name}) + "\n")
    return f"{name}: nothing to see"


def offered(function):
    return app.tool()(function) if not ONLY or function.__name__ in ONLY else function


@offered
def external_directory() -> str:
    """Say hello; does nothing else (run as the server `mcp` it would be `mcp_external_directory`)."""
    return logged("external_directory")


@offered
def directory() -> str:
    """Say hello; does nothing else."""
    return logged("directory")


@offered
def internals() -> str:
    """Say hello; does nothing else."""
    return logged("internals")


if __name__ == "__main__":
    time.sleep(float(os.environ.get("NAMED_DELAY", "0")))  # to choose which of two servers lists its tools first
    app.run()
