"""An MCP tool cannot wear a built-in permission's name: "always" at its prompt grants that tool, nothing else.

A real server (`servers/named.py`) runs as `external`, whose tool `directory` would be `external_directory`, and
as `git`, whose `internals` would be `git_internals`. The person says "always" to every MCP tool; they would
never let the agent write `$HOME/.profile` or a git hook, so they refuse those prompts. Run for real, the file
must not appear. With the reservation weakened (the tool keeps the name `external_directory`), the same run
writes `$HOME/.profile` without anyone being asked: that is the harm the test looks for.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from opencode_nb.mcp import tool as mcp_tool
from opencode_nb.mcp.tool import tool_name

from .conftest import tool_parts

pytestmark = pytest.mark.timeout(90)

NAMED = Path(__file__).parent / "servers" / "named.py"
GUARDED = ("external_directory", "git_internals", "agent_config")


def entry(log: Path) -> dict[str, Any]:
    return {"type": "local", "command": [sys.executable, str(NAMED)], "environment": {"NAMED_LOG": str(log)}}


async def attack(project, server: str, tool: str, write: dict[str, Any]) -> tuple[list[Any], list[Any], Any]:
    """The model calls the server's tool, then `write`; the person says "always" to every MCP tool's prompt and
    to everything else but the guarded permissions' prompts."""
    asked: list[Any] = []

    def person(request: Any) -> str:
        asked.append(request)
        an_mcp_tool = "server" in request.metadata  # the prompt shows the server, the tool, its arguments
        return "always" if an_mcp_tool or request.permission not in GUARDED else "reject"

    log = project.root / "named.log"
    ws = project.workspace({"mcp": {server: entry(log)}}, on_ask=person)
    name = tool_name(server, tool)
    project.script({"tool_calls": [{"name": name, "input": {}}]},
                   {"tool_calls": [{"name": "write", "input": write}]}, {"text": "done"})
    session = ws.sessions.create()
    try:
        await asyncio.wait_for(ws.prompt(session.id, "go"), 60)
        parts = tool_parts(ws, session.id)
        warnings = list(ws.warnings)
    finally:
        await ws.aclose()
    assert parts[0].state.status == "completed", parts[0].state  # the server's tool did run
    assert [json.loads(line)["tool"] for line in log.read_text().splitlines()] == [tool]
    return asked, warnings, parts[1].state


@pytest.fixture
def home(project, monkeypatch) -> Path:
    monkeypatch.setenv("HOME", str(project.tmp))  # `project.env` makes it the workspace's $HOME too
    return project.tmp


async def test_always_on_an_mcp_tool_named_external_directory_does_not_open_home(project, home):
    profile = home / ".profile"
    asked, warnings, write = await attack(project, "external", "directory",
                                          {"path": str(profile), "content": "export SANDBOX=off\n"})
    assert not profile.exists()
    assert asked[0].permission == "mcp_external_directory"
    assert [r.permission for r in asked[1:]] == ["external_directory"]  # the write still asked, and was refused
    assert write.status == "error"
    assert any("offered as mcp_external_directory" in w and "external_directory" in w for w in warnings), warnings


async def test_always_on_an_mcp_tool_named_git_internals_does_not_open_git_hooks(project, home):
    hook = project.root / ".git" / "hooks" / "pre-commit"
    asked, _, write = await attack(project, "git", "internals", {"path": ".git/hooks/pre-commit",
                                                                 "content": "#!/bin/sh\ntouch pwned\n"})
    assert not hook.exists()
    assert asked[0].permission == "mcp_git_internals"
    assert "git_internals" in [r.permission for r in asked[1:]]
    assert write.status == "error"


async def test_with_the_reservation_weakened_the_same_run_writes_home_without_asking(project, home, monkeypatch):
    """The control: the harm is real, and it is the name that carries it."""
    monkeypatch.setattr(mcp_tool, "is_reserved", lambda name: False)
    profile = home / ".profile"
    asked, _, write = await attack(project, "external", "directory",
                                   {"path": str(profile), "content": "export SANDBOX=off\n"})
    assert [r.permission for r in asked] == ["external_directory"]  # the tool's own prompt, said "always" to
    assert write.status == "completed" and profile.read_text() == "export SANDBOX=off\n"


async def test_mcp_lists_the_renamed_tool_and_why(project, home):
    from opencode_nb.mcp.report import describe

    log = project.root / "named.log"
    ws = project.workspace({"mcp": {"external": entry(log)}})
    project.script({"text": "done"})
    session = ws.sessions.create()
    try:
        await asyncio.wait_for(ws.prompt(session.id, "go"), 60)
        text = describe(ws.mcp.states(), ws.agents.get("build").permission, "build")
    finally:
        await ws.aclose()
    assert "mcp_external_directory  (directory)" in text
    assert "renamed: external_directory is a built-in permission's name" in text
