"""A local server's relative command runs from the folder of the config file that names it, a missing program
is said before anybody is asked to approve it, and a server that could not start says why with the prompt."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys

import pytest

from opencode_nb.views.render import synthetic_line

from .conftest import ECHO, Project, tool_parts

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def repo(project: Project) -> Project:
    """The project with a notebook's folder `play/` holding a copy of the echo server beside its own config."""
    (project.root / "play").mkdir()
    shutil.copy(ECHO, project.root / "play" / "server.py")
    return project


def configure(folder, **entries) -> None:
    (folder / "opencode.json").write_text(json.dumps({"mcp": entries}))


def opened_in(project: Project, folder, asked: list):
    def person(request):
        asked.append(request)
        return "once"

    from opencode_nb import Workspace

    ws = Workspace(folder, {"model": "scripted/demo", "small_model": "scripted/demo",
                            "permission": {"echo_*": "allow"}}, data_dir=project.tmp / "data", env=project.env,
                   on_ask=person)
    ws.providers.register("scripted", project.model)
    return ws


def notes(ws, session_id: str) -> list[str]:
    return [p.text for m in ws.sessions.messages(session_id) if m.message.role == "user" for p in m.parts
            if p.type == "text" and p.synthetic]


async def test_a_script_beside_a_subfolder_s_config_runs_from_that_folder(repo):
    configure(repo.root / "play", echo={"type": "local", "command": [sys.executable, "server.py"],
                                        "environment": {"ECHO_LOG": str(repo.log)}})
    asked: list = []
    ws = opened_in(repo, repo.root / "play", asked)
    repo.script({"tool_calls": [{"name": "echo_echo", "input": {"text": "ok"}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 60)
    assert tool_parts(ws, session.id)[0].state.output == "echo: ok", ws.mcp.states()
    [approval] = [r for r in asked if r.permission == "mcp"]
    assert "play/server.py" in approval.metadata["files"]  # the code approved is the code that runs
    await ws.aclose()


async def test_a_script_named_by_the_repository_s_config_runs_from_the_root_for_a_notebook_below(repo):
    (repo.root / "tools").mkdir()
    shutil.copy(ECHO, repo.root / "tools" / "echo_server.py")
    configure(repo.root, echo={"type": "local", "command": [sys.executable, "tools/echo_server.py"],
                               "environment": {"ECHO_LOG": str(repo.log)}})
    ws = opened_in(repo, repo.root / "play", [])
    repo.script({"tool_calls": [{"name": "echo_echo", "input": {"text": "ok"}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 60)
    assert tool_parts(ws, session.id)[0].state.output == "echo: ok", ws.mcp.states()
    await ws.aclose()


async def test_a_program_that_is_not_installed_is_said_missing_and_never_offered_for_approval(repo):
    configure(repo.root / "play", files={"type": "local", "command": ["uvx-not-installed-here", "mcp-files"]})
    asked: list = []
    ws = opened_in(repo, repo.root / "play", asked)
    repo.script({"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 60)
    assert not [r for r in asked if r.permission == "mcp"]
    [state] = ws.mcp.states()
    assert state.status == "failed"
    assert "uvx-not-installed-here is not installed" in state.error
    assert str(repo.root / "play" / "opencode.json") in state.error and "files" in state.error
    [note] = notes(ws, session.id)
    assert "uvx-not-installed-here is not installed" in note
    assert "uvx-not-installed-here is not installed" in synthetic_line(note)  # the card shows it
    assert any("uvx-not-installed-here" in str(m) for m in repo.model.requests[0].messages)  # the model reads it
    await ws.aclose()


async def test_a_missing_relative_program_names_where_it_was_looked_for(repo):
    configure(repo.root / "play", tool={"type": "local", "command": ["./bin/server"]})
    asked: list = []
    ws = opened_in(repo, repo.root / "play", asked)
    repo.script({"text": "done"})
    await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "go"), 60)
    [state] = ws.mcp.states()
    assert not asked and state.status == "failed"
    assert f"looked for {repo.root / 'play' / 'bin' / 'server'}" in state.error
    await ws.aclose()


async def test_a_server_that_fails_to_start_says_why_with_the_prompt_that_needed_it(repo):
    global_dir = repo.tmp / "xdg" / "opencode_nb"
    global_dir.mkdir(parents=True)
    configure(global_dir, broken={"type": "local", "command": [sys.executable, "-c",
                                                               "import sys; sys.exit('no database configured')"]})
    ws = opened_in(repo, repo.root / "play", [])
    repo.script({"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 60)
    [note] = notes(ws, session.id)
    assert synthetic_line(note).startswith("The MCP server broken did not start")
    assert "no database configured" in note
    await ws.aclose()
