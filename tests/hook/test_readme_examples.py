"""The README's hooks, as written there, through the real loop: `git push` is refused with the hook's words for
the model, and a wait for the person is noted with its cell."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import yaml

from .test_in_the_loop import bash_then_text, run, server, tool_results, workspace  # noqa: F401 (fixture)

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_hooks() -> dict:
    section = README.read_text().split("## Hooks, plugins and diagnostics", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None, "the README's Hooks section starts with a yaml example"
    return yaml.safe_load(block.group(1))


async def test_the_readmes_git_push_hook_refuses_and_the_model_reads_why(tmp_path, server):  # noqa: F811
    ws = workspace(tmp_path, server, readme_hooks())
    server.queue(*bash_then_text("git push origin main"), *bash_then_text("git status --short"))
    with ws:
        await run(ws)
        await run(ws)
    assert "git push is not for agents: ask the person" in tool_results(server, 1)[0]
    assert "not for agents" not in tool_results(server, 3)[0], "other commands run"


async def test_the_readmes_ask_waiting_hook_notes_the_wait(tmp_path, server):  # noqa: F811
    config = {**readme_hooks(), "permission": {"bash": "ask"}}
    answered = asyncio.Event()

    async def later(request):
        await asyncio.sleep(1.0)  # the hook runs while the ask waits
        answered.set()
        return "once"

    ws = workspace(tmp_path, server, config, on_ask=later)
    server.queue(*bash_then_text("true"))
    with ws:
        await run(ws)
    waiting = ws.root / "waiting.jsonl"
    [line] = waiting.read_text().splitlines()
    noted = json.loads(line)
    assert noted["message"] == "An agent needs permission to use bash" and "cell_id" in noted
