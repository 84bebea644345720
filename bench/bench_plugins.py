"""What a Python plugin's hook adds to a tool call (goal: <= 0.1 ms, median), and what no plugin adds.

Each figure is the median over 21 batches of the time per call within a batch of 2,000 calls, awaited as the
loop awaits them: `tool_execute_before` with no plugin, with one plain no-op hook, one `async` no-op hook, one
that changes the arguments, and five plugins in a row; `tool_execute_after` and `permission_ask` with one
plugin; a bus event to one plain `event` hook. Then loading: `Plugins.load` of one configured plugin, without
and with the scan of installed entry points (once per workspace).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from opencode_nb.hook.plugin_api import ToolCall
from opencode_nb.hook.plugins import Plugins
from opencode_nb.permission.events import PermissionAsked, PermissionRequest
from opencode_nb.tool import ToolResult

GOAL_MS = 0.1
BATCH = 2000
ROUNDS = 21

PLUGINS = {
    "bench_plain": "def tool_execute_before(call, args):\n    return None\n",
    "bench_async": "async def tool_execute_before(call, args):\n    return None\n",
    "bench_change": "def tool_execute_before(args):\n    return {**args, 'timeout': 5}\n",
    "bench_after": "def tool_execute_after(result):\n    return None\n",
    "bench_ask": "def permission_ask(request):\n    return 'allow' if request.permission == 'read' else None\n",
    "bench_event": "seen = []\ndef event(event):\n    seen.append(event.type)\n    seen.clear()\n",
    **{f"bench_chain{i}": "def tool_execute_before(call, args):\n    return None\n" for i in range(5)},
}

CALL = ToolCall("bash", "ses_bench", "call_1", "build")
ARGS = {"command": "git status", "description": "Show the working tree's state"}
RESULT = ToolResult("git status", "On branch main\nnothing to commit, working tree clean\n", {"summary": "ok"})
REQUEST = PermissionRequest(id="per_1", session_id="ses_bench", agent="build", permission="bash",
                            patterns=["git push"])


async def per_call_ms(call: Callable[[], Awaitable[Any]]) -> float:
    """Median over rounds of the milliseconds one awaited call takes within a batch."""
    samples = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for _ in range(BATCH):
            await call()
        samples.append((time.perf_counter() - started) / BATCH * 1000)
    return statistics.median(samples)


def per_sync_call_ms(call: Callable[[], Any]) -> float:
    samples = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for _ in range(BATCH):
            call()
        samples.append((time.perf_counter() - started) / BATCH * 1000)
    return statistics.median(samples)


def load(*specs: str, entry_points: bool = False) -> Plugins:
    problems: list[str] = []
    plugins = Plugins.load(list(specs), entry_points=entry_points, report=problems.append)
    assert not problems, problems
    return plugins


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        for name, source in PLUGINS.items():
            (Path(folder) / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        sys.path.insert(0, folder)
        none = load()
        plain, asynchronous, change = load("bench_plain"), load("bench_async"), load("bench_change")
        chain = load(*(f"bench_chain{i}" for i in range(5)))
        after, ask, event = load("bench_after"), load("bench_ask"), load("bench_event")

        async def bare() -> None:
            return None

        rows = [
            ("an awaited call of nothing (the floor)", await per_call_ms(bare)),
            ("before, no plugin", await per_call_ms(lambda: none.tool_execute_before(CALL, ARGS))),
            ("before, one plain no-op hook", await per_call_ms(lambda: plain.tool_execute_before(CALL, ARGS))),
            ("before, one async no-op hook", await per_call_ms(lambda: asynchronous.tool_execute_before(CALL, ARGS))),
            ("before, one hook changing the arguments",
             await per_call_ms(lambda: change.tool_execute_before(CALL, ARGS))),
            ("before, five plain hooks in a row", await per_call_ms(lambda: chain.tool_execute_before(CALL, ARGS))),
            ("after, no plugin", await per_call_ms(lambda: none.tool_execute_after(CALL, RESULT, args=ARGS))),
            ("after, one plain no-op hook",
             await per_call_ms(lambda: after.tool_execute_after(CALL, RESULT, args=ARGS))),
            ("permission.ask, no plugin", await per_call_ms(lambda: none.permission_ask(REQUEST))),
            ("permission.ask, one policy hook", await per_call_ms(lambda: ask.permission_ask(REQUEST))),
        ]
        asked = PermissionAsked(request=REQUEST)
        rows.append(("event, no plugin", per_sync_call_ms(lambda: none.event(asked))))
        rows.append(("event, one plain hook", per_sync_call_ms(lambda: event.event(asked))))
        for label, ms in rows:
            print(f"{label:<44} {ms * 1000:8.2f} µs")
        worst = max(ms for label, ms in rows if "one" in label and "five" not in label)
        print(f"\nslowest single-plugin hook: {worst * 1000:.2f} µs per call; goal <= {GOAL_MS * 1000:.0f} µs: "
              f"{'met' if worst <= GOAL_MS else 'NOT met'}")

        loads = []
        for entry_points in (False, True):
            times = []
            for i in range(7):
                for name in list(sys.modules):
                    if name.startswith("bench_"):
                        del sys.modules[name]
                started = time.perf_counter()
                load(f"bench_chain{i % 5}", entry_points=entry_points)
                times.append((time.perf_counter() - started) * 1000)
            loads.append(statistics.median(times))
        print(f"Plugins.load of one plugin (imported afresh): {loads[0]:.2f} ms; with the entry point scan "
              f"{loads[1]:.2f} ms")
        sys.path.remove(folder)


if __name__ == "__main__":
    asyncio.run(main())
