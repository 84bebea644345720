"""Per-step overhead of the loop, with a zero-latency scripted model making one tool call per step.

One run of 520 steps; the time between consecutive steps is averaged around step 50 and around step 500,
so the two figures differ only in how much history the loop carries. A separate figure gives the cost of
starting a new prompt on a 500-step session (the history is loaded once per prompt, not per step).

Goal: <= 1 ms per step at 500 steps, and the 500-step figure no more than 1.5x the 50-step figure.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

from opencode_nb import Workspace
from opencode_nb.provider import Scripted
from opencode_nb.tool.base import Tool, ToolContext, ToolResult

STEPS = 520
WINDOW = 20


class NoopParams(BaseModel):
    n: int


class NoopTool(Tool[NoopParams]):
    id = "noop"
    params = NoopParams
    description = "Does nothing."  # type: ignore[assignment]

    async def execute(self, params: NoopParams, ctx: ToolContext) -> ToolResult:
        return ToolResult("noop", f"done {params.n}")


def scripted(steps: int) -> Scripted:
    count = {"n": 0}

    def respond(request):
        count["n"] += 1
        usage = {"input": 10, "output": 1}
        if count["n"] > steps:
            count["n"] = 0
            return {"text": "done", "usage": usage}
        return {"tool_calls": [{"name": "noop", "input": {"n": count["n"]}}], "usage": usage}

    return Scripted(respond=respond)


async def run(tmp: Path) -> tuple[float, float, float]:
    ws = Workspace(tmp, {"model": "scripted/demo", "agent": {"build": {"steps": 100_000}}},
                   data_dir=tmp / "data", env={"XDG_CONFIG_HOME": str(tmp / "xdg")})
    ws.tools.register(NoopTool())
    ws.providers.register("scripted", scripted(STEPS))
    stamps: list[float] = []
    ws.bus.subscribe("message.part.updated",
                     lambda e: stamps.append(time.perf_counter()) if e.part.type == "step-finish" else None)
    session = ws.sessions.create(str(tmp))
    await ws.prompt(session.id, "go")
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    at_50 = statistics.mean(gaps[50 - WINDOW // 2: 50 + WINDOW // 2]) * 1000
    at_500 = statistics.mean(gaps[500 - WINDOW // 2: 500 + WINDOW // 2]) * 1000
    ws.providers.register("scripted", Scripted([{"text": "hello", "usage": {"input": 1, "output": 1}}]))
    start = time.perf_counter()
    await ws.prompt(session.id, "one more")
    prompt_ms = (time.perf_counter() - start) * 1000
    await ws.aclose()
    return at_50, at_500, prompt_ms


async def main() -> None:
    results = []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as tmp:
            results.append(await run(Path(tmp)))
    at_50, at_500, prompt_ms = (statistics.median(r[i] for r in results) for i in range(3))
    print(f"per-step overhead at  50 steps of history: {at_50:.2f} ms")
    print(f"per-step overhead at 500 steps of history: {at_500:.2f} ms  ({at_500 / at_50:.2f}x the 50-step figure)")
    print(f"a new one-step prompt on the 500-step session: {prompt_ms:.1f} ms (history loaded once per prompt)")


if __name__ == "__main__":
    asyncio.run(main())
