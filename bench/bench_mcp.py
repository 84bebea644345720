"""What calling a tool of a local MCP server costs over calling the same function in-process.

The echo server of the tests (`tests/mcp/servers/echo.py`, built with the SDK) runs over stdio, inside the OS
sandbox (`sandbox: auto`) and without it (`sandbox: off`); `echo("x")` is called 300 times through
`ServerClient.call` (the SDK's `ClientSession.call_tool`, our timeout and crash watch), interleaved with the
same number of direct calls of the server's own function. The figure is the difference of the medians.
Goal: ≤ 5 ms. Also printed: the server's start-up (spawn, initialize, list tools) and a whole call through
`McpTool.run` (permission check, result conversion, output bound) with the rules allowing it.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "mcp" / "servers"))

from echo import echo  # noqa: E402 - the server's own function, called directly

from opencode_nb import Workspace  # noqa: E402
from opencode_nb.tool.context import ToolContext  # noqa: E402

CALLS = 300


async def measure(sandbox: str) -> None:
    tmp = Path(tempfile.mkdtemp())
    root = tmp / "proj"
    (root / ".git").mkdir(parents=True)
    ws = Workspace(root, {"model": "scripted/demo", "sandbox": sandbox, "permission": {"echo_*": "allow"},
                          "mcp": {"echo": {"type": "local", "command": [sys.executable,
                                                                         str(ROOT / "tests/mcp/servers/echo.py")]}}},
                   data_dir=tmp / "data", env={"XDG_CONFIG_HOME": str(tmp / "xdg"), "HOME": str(tmp)})
    session = ws.sessions.create()
    started = time.perf_counter()
    await ws.mcp.prepare(session.id, "build")
    startup = time.perf_counter() - started
    client = ws.mcp.clients["echo"]
    await client.call("echo", {"text": "warm"})
    direct: list[float] = []
    over_mcp: list[float] = []
    for _ in range(CALLS):
        t0 = time.perf_counter()
        echo("x")
        direct.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await client.call("echo", {"text": "x"})
        over_mcp.append(time.perf_counter() - t0)
    tool = ws.tools.get("echo_echo")

    async def allow(*args: object, **kwargs: object) -> None:
        return None

    ctx = ToolContext(session_id=session.id, message_id="msg", call_id="call", agent="build", directory=ws.root,
                      data_dir=ws.data_dir, ask=allow)
    whole: list[float] = []
    for _ in range(CALLS // 3):
        t0 = time.perf_counter()
        await tool.run({"text": "x"}, ctx)
        whole.append(time.perf_counter() - t0)
    [state] = ws.mcp.states()
    await ws.aclose()
    ms = 1000
    print(f"sandbox {sandbox} ({state.sandbox}): start-up {startup * ms:.0f} ms; "
          f"direct {statistics.median(direct) * 1e6:.1f} µs, over MCP {statistics.median(over_mcp) * ms:.2f} ms "
          f"(p90 {statistics.quantiles(over_mcp, n=10)[-1] * ms:.2f} ms): overhead "
          f"{(statistics.median(over_mcp) - statistics.median(direct)) * ms:.2f} ms; "
          f"McpTool.run {statistics.median(whole) * ms:.2f} ms")


async def main() -> None:
    for sandbox in ("auto", "off"):
        await measure(sandbox)


if __name__ == "__main__":
    asyncio.run(main())
