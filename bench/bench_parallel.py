"""Eight subagent tasks at once against a scripted model with 0.5 s latency per step (3 steps each).

The wall time of the eight-task run is compared with a one-task run: the children run concurrently, so
the goal is no more than 1.3x.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from opencode_nb import Workspace
from opencode_nb.provider import Scripted

LATENCY_S = 0.5
CHILD_STEPS = 3


def model(tasks: int) -> Scripted:
    async def respond(request):
        await asyncio.sleep(LATENCY_S)
        system = "\n".join(request.system)
        if "You are explore" in system:
            steps = sum(1 for m in request.messages if m.role == "assistant")
            if steps + 1 < CHILD_STEPS:
                return {"tool_calls": [{"name": "glob", "input": {"pattern": f"*{steps}*.py"}}]}
            return {"text": "survey done"}
        if any(m.role == "tool" for m in request.messages):
            return {"text": "all surveys done"}
        return {"tool_calls": [{"name": "task", "input": {"description": f"Survey part {i}", "prompt": f"part {i}",
                                                          "subagent_type": "explore"}} for i in range(tasks)]}

    return Scripted(respond=respond)


async def wall_time(tasks: int, tmp: Path) -> float:
    project = tmp / f"p{tasks}"
    project.mkdir()
    ws = Workspace(project, {"model": "scripted/demo"}, data_dir=tmp / f"d{tasks}",
                   env={"XDG_CONFIG_HOME": str(tmp / "xdg")})
    ws.providers.register("scripted", model(tasks))
    session = ws.sessions.create(str(project))
    start = time.perf_counter()
    await ws.prompt(session.id, "survey the project")
    elapsed = time.perf_counter() - start
    assert len(ws.sessions.children(session.id)) == tasks
    await ws.aclose()
    return elapsed


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        one = await wall_time(1, Path(tmp))
        eight = await wall_time(8, Path(tmp))
    print(f"one task:    {one:.2f} s wall (parent 2 steps + child {CHILD_STEPS} steps at {LATENCY_S} s each)")
    print(f"eight tasks: {eight:.2f} s wall  ({eight / one:.2f}x one task; goal <= 1.3x)")


if __name__ == "__main__":
    asyncio.run(main())
