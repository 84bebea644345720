"""A script's view of a workspace: the answer at hand, and asks that never hang it.

Outside a kernel nobody clicks Allow. An ask that nobody subscribed to answer is decided at once by the
unattended policy (`OPENCODE_NB_PERMISSION`, default deny) and the result lists the decision; a script
may answer itself with `on_ask` / `on_question`, or by subscribing to the ask events.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest

from opencode_nb import Workspace
from opencode_nb.provider import Scripted

README = Path(__file__).resolve().parents[1] / "README.md"
GLOB = {"tool_calls": [{"name": "glob", "input": {"pattern": "*.py"}}]}


def workspace(tmp_path: Path, turns: list[dict], *, permission: dict | None = None, env: dict | None = None,
              **options) -> Workspace:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "stats.py").write_text("def mean(xs):\n    return sum(xs) / len(xs)\n")
    rules = {"*": "allow", "bash": "ask"} if permission is None else permission
    ws = Workspace(root, {"model": "scripted/demo", "permission": rules},
                   data_dir=tmp_path / "data",
                   env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path), **(env or {})}, **options)
    ws.providers.register("scripted", Scripted(turns))
    return ws


async def test_a_session_made_without_arguments_works_in_the_workspace_directory(tmp_path):
    ws = workspace(tmp_path, [])
    session = ws.sessions.create()
    assert session.directory == str(ws.directory)
    assert ws.sessions.list(str(ws.directory)) == [session]
    ws.close()


async def test_the_result_holds_the_answer_its_parts_tokens_and_cost(tmp_path):
    turns = [{**GLOB, "usage": {"input": 100, "output": 10}},
             {"text": "The mean is in stats.py.", "usage": {"input": 150, "output": 20}}]
    ws = workspace(tmp_path, turns)
    result = await ws.prompt(ws.sessions.create().id, "Where is the mean?")
    assert result.text == "The mean is in stats.py."
    assert result.finish == "stop" and result.error is None and result.agent == "build"
    assert [p.type for p in result.parts if p.type == "text"] == ["text"]
    assert result.message is not None and result.message.role == "assistant"
    assert result.tokens.input == 250 and result.tokens.output == 30
    assert result.unattended == []
    ws.close()


async def test_a_repeated_call_with_nobody_to_ask_is_refused_by_policy_instead_of_hanging(tmp_path):
    ws = workspace(tmp_path, [GLOB, GLOB, GLOB, {"text": "I will stop repeating myself."}], permission={})
    result = await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "go"), 10)
    assert result.text == "I will stop repeating myself."
    [decision] = result.unattended
    assert (decision.kind, decision.subject, decision.outcome) == ("permission", "doom_loop glob", "refused")
    third = [p for m in ws.sessions.messages(result.session_id) for p in m.parts if p.type == "tool"][2]
    assert third.state.status == "error" and "nobody to approve it" in third.state.error
    ws.close()


async def test_the_unattended_policy_comes_from_the_environment(tmp_path):
    turns = [{"tool_calls": [{"name": "bash", "input": {"command": "touch made.txt"}}]}, {"text": "Made."}]
    ws = workspace(tmp_path, turns, env={"OPENCODE_NB_PERMISSION": "allow"})
    result = await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "make a file"), 10)
    assert (ws.root / "made.txt").exists()
    assert [(d.subject, d.outcome) for d in result.unattended] == [("bash touch made.txt", "allowed")]
    ws.close()


async def test_by_default_nothing_that_would_ask_happens(tmp_path):
    turns = [{"tool_calls": [{"name": "bash", "input": {"command": "touch made.txt"}}]}, {"text": "Could not."}]
    ws = workspace(tmp_path, turns)
    result = await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "make a file"), 10)
    assert not (ws.root / "made.txt").exists()
    assert [(d.subject, d.outcome) for d in result.unattended] == [("bash touch made.txt", "refused")]
    ws.close()


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_a_script_answers_asks_itself_with_a_callback(tmp_path, asynchronous):
    seen = []

    def answer(request):
        seen.append((request.permission, request.patterns))
        return "once"

    async def answer_later(request):
        await asyncio.sleep(0.01)
        return answer(request)

    turns = [{"tool_calls": [{"name": "bash", "input": {"command": "touch made.txt"}}]}, {"text": "Made."}]
    ws = workspace(tmp_path, turns, on_ask=answer_later if asynchronous else answer)
    result = await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "make a file"), 10)
    assert seen == [("bash", ["touch made.txt"])]
    assert (ws.root / "made.txt").exists() and result.unattended == []
    ws.close()


async def test_questions_are_answered_by_a_callback_or_dismissed_by_policy(tmp_path):
    ask = {"tool_calls": [{"name": "question", "input": {"questions": [
        {"question": "Which file?", "options": [{"label": "stats.py"}, {"label": "other.py"}]}]}}]}
    ws = workspace(tmp_path, [ask, {"text": "ok"}], on_question=lambda request: [["other.py"]])
    await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "go"), 10)
    [part] = [p for m in ws.sessions.messages(ws.sessions.list()[0].id) for p in m.parts if p.type == "tool"]
    assert '"Which file?" = "other.py"' in part.state.output
    ws.close()

    ws = workspace(tmp_path / "again", [ask, {"text": "I assumed stats.py."}])
    result = await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "go"), 10)
    assert result.text == "I assumed stats.py."
    assert [(d.kind, d.outcome) for d in result.unattended] == [("question", "dismissed")]
    ws.close()


async def test_a_subscriber_to_the_ask_event_is_somebody_who_answers(tmp_path):
    turns = [{"tool_calls": [{"name": "bash", "input": {"command": "touch made.txt"}}]}, {"text": "Made."}]
    ws = workspace(tmp_path, turns)
    ws.bus.subscribe("permission.asked", lambda event: asyncio.get_running_loop().call_soon(
        ws.permissions.reply, event.request.id, "once"))
    result = await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "make a file"), 10)
    assert (ws.root / "made.txt").exists() and result.unattended == []
    ws.close()


def test_the_readme_python_example_runs_as_written(tmp_path):
    text = README.read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1]
    [code] = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], re.S)[:1]
    assert len(code.strip().splitlines()) <= 12
    (tmp_path / ".git").mkdir()
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OPENCODE_NB_DATA_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "I kept to the project." in done.stdout and "external_directory /etc/*: refused" in done.stdout
