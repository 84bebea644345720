"""A server the project's own files define starts only after the person approved that entry, once."""

from __future__ import annotations

import asyncio
import json

import pytest

from .conftest import calls, local_entry, tool_parts

pytestmark = pytest.mark.timeout(90)


def in_project_config(project, entry: dict) -> None:
    (project.root / "opencode.json").write_text(json.dumps({"mcp": {"echo": entry}}))


def in_global_config(project, entry: dict) -> None:
    folder = project.tmp / "xdg" / "opencode_nb"
    folder.mkdir(parents=True)
    (folder / "opencode.json").write_text(json.dumps({"mcp": {"echo": entry}}))


async def test_unapproved_and_nobody_present_it_never_starts(project):
    in_project_config(project, local_entry(project.log))
    ws = project.workspace({"permission": {"echo_*": "allow"}})
    assert [s.status for s in ws.mcp.states()] == ["waiting"]
    project.script({"text": "done"})
    session = ws.sessions.create()
    result = await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    assert not project.log.exists()  # no process: the server logs its start before anything else
    assert ws.mcp.clients == {}
    [state] = ws.mcp.states()
    assert state.status == "refused" and "nobody" in state.error
    assert not [t for t in project.model.requests[0].tools if t.name.startswith("echo_")]
    [decision] = result.unattended
    assert decision.subject == "mcp echo" and decision.outcome == "refused"
    await ws.aclose()


async def test_the_prompt_says_what_runs_and_which_file_asks_and_approval_is_remembered(project):
    in_project_config(project, local_entry(project.log))
    asked: list = []

    def person(request):
        asked.append(request)
        return "once"

    ws = project.workspace({"permission": {"echo_*": "allow"}}, on_ask=person)
    project.script({"tool_calls": [{"name": "echo_echo", "input": {"text": "ok"}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    [request] = asked
    assert request.permission == "mcp" and request.patterns == ["echo"]
    assert request.metadata["target"].endswith("echo.py")
    assert request.metadata["source"] == str(project.root / "opencode.json")
    assert tool_parts(ws, session.id)[0].state.output == "echo: ok"
    await ws.aclose()

    again = project.workspace({"permission": {"echo_*": "allow"}}, on_ask=person)
    project.script({"text": "done"})
    await asyncio.wait_for(again.prompt(again.sessions.create().id, "go"), 30)
    assert len(asked) == 1  # the same entry: not asked again
    assert [s.status for s in again.mcp.states()] == ["ready"]
    await again.aclose()


async def test_a_changed_entry_asks_again(project):
    in_project_config(project, local_entry(project.log))
    asked: list = []
    ws = project.workspace(on_ask=lambda request: asked.append(request) or "once")
    project.script({"text": "done"}, {"text": "done"})
    await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "go"), 30)
    await ws.aclose()
    in_project_config(project, local_entry(project.log, environment={"ECHO_LOG": str(project.log), "EXTRA": "1"}))
    ws = project.workspace(on_ask=lambda request: asked.append(request) or "reject")
    await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "go"), 30)
    assert len(asked) == 2
    assert [s.status for s in ws.mcp.states()] == ["refused"]
    await ws.aclose()


async def test_a_refusal_is_not_asked_again_in_the_same_workspace_and_starts_nothing(project):
    in_project_config(project, local_entry(project.log))
    asked: list = []
    ws = project.workspace(on_ask=lambda request: asked.append(request) or "reject")
    project.script({"text": "one"}, {"text": "two"})
    session = ws.sessions.create()
    first = await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    second = await asyncio.wait_for(ws.prompt(session.id, "again"), 30)
    assert (first.text, second.text) == ("one", "two")  # refusing a server does not end the run
    assert len(asked) == 1
    assert not project.log.exists()
    await ws.aclose()


async def test_headless_with_the_allow_policy_it_starts(project):
    in_project_config(project, local_entry(project.log))
    ws = project.workspace({"permission": {"echo_*": "allow"}}, env={"OPENCODE_NB_PERMISSION": "allow"})
    project.script({"tool_calls": [{"name": "echo_echo", "input": {"text": "ok"}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    assert [c["tool"] for c in calls(project.log)] == ["started", "echo"]
    await ws.aclose()


async def test_a_server_from_the_person_s_global_config_starts_without_asking(project):
    in_global_config(project, local_entry(project.log))
    ws = project.workspace({"permission": {"echo_*": "allow"}})
    project.script({"tool_calls": [{"name": "echo_echo", "input": {"text": "ok"}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    assert [c["tool"] for c in calls(project.log)] == ["started", "echo"]
    assert ws.mcp.entries["echo"].project is False
    await ws.aclose()


async def test_a_project_file_changing_one_key_of_a_global_entry_needs_approval(project):
    in_global_config(project, local_entry(project.log))
    (project.root / "opencode.json").write_text(json.dumps({"mcp": {"echo": {"command": ["sh", "-c", "id"]}}}))
    ws = project.workspace()
    assert ws.mcp.entries["echo"].project is True
    assert [s.status for s in ws.mcp.states()] == ["waiting"]
    ws.close()
