"""A local server's program is looked for as its process will find it: inside the OS sandbox, with the PATH the
server is given. A program in a folder the entry's own PATH adds under /tmp is on this machine but not in the
sandbox (which gives /tmp its own contents), so it is said missing before any start, and the start would
indeed fail; without the sandbox the same entry is found and starts. Real bubblewrap, real server."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from opencode_nb.mcp import servers
from opencode_nb.mcp.program import missing_program
from opencode_nb.sandbox.policy import Backend, find_backend

from .conftest import ECHO, Project, called, tool_parts

pytestmark = [pytest.mark.timeout(90),
              pytest.mark.skipif(not isinstance(find_backend(), Backend), reason="no OS sandbox here")]


def program_outside_the_project(project: Project) -> Path:
    """`echo-server`, an executable that runs the echo server, in a folder under /tmp beside the project."""
    folder = project.tmp / "tools" / "bin"
    folder.mkdir(parents=True)
    program = folder / "echo-server"
    program.write_text(f"#!/bin/sh\nexec {sys.executable} {ECHO} \"$@\"\n")
    program.chmod(0o755)
    assert str(folder).startswith("/tmp/") and not str(folder).startswith(str(project.root))
    return folder


def config(project: Project, folder: Path, sandbox: str) -> dict:
    entry = {"type": "local", "command": ["echo-server"],
             "environment": {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", "ECHO_LOG": str(project.log)}}
    return {"sandbox": sandbox, "mcp": {"echo": entry}, "permission": {"echo_*": "allow", "mcp": "allow"}}


async def prompt_calling_echo(project: Project, ws):
    project.script({"tool_calls": [{"name": "echo_echo", "input": {"text": "ok"}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 60)
    return session.id


async def test_a_program_only_on_a_path_the_sandbox_hides_is_said_missing_and_would_not_start(project, monkeypatch):
    folder = program_outside_the_project(project)
    ws = project.workspace(config(project, folder, "auto"))
    await prompt_calling_echo(project, ws)
    [state] = ws.mcp.states()
    assert state.status == "failed" and "not inside the OS sandbox" in state.error, state.error
    assert str(folder / "echo-server") in state.error, "where it is on this machine"
    assert called(project.log) == [] and not ws.mcp.clients, "nothing was started"
    await ws.aclose()

    # The control: judged on the host's PATH alone, it is there, so it is started, and the start fails.
    async def on_the_host(entry, folder, env, confined):
        return missing_program(entry, folder, env)

    monkeypatch.setattr(servers, "missing_program_confined", on_the_host)
    ws = project.workspace(config(project, folder, "auto"))
    await prompt_calling_echo(project, ws)
    [state] = ws.mcp.states()
    assert state.status == "failed" and "echo-server" in (state.error or ""), state
    assert called(project.log) == [], "the server never ran"
    await ws.aclose()


async def test_without_the_sandbox_the_same_program_is_found_and_starts(project):
    folder = program_outside_the_project(project)
    ws = project.workspace(config(project, folder, "off"))
    session_id = await prompt_calling_echo(project, ws)
    assert tool_parts(ws, session_id)[0].state.output == "echo: ok", ws.mcp.states()
    await ws.aclose()


async def test_a_program_the_sandbox_shows_is_found_inside_and_starts(project):
    folder = project.root / "bin"  # inside the project: the sandbox shows it
    folder.mkdir()
    program = folder / "echo-server"
    program.write_text(f"#!/bin/sh\nexec {sys.executable} {ECHO} \"$@\"\n")
    program.chmod(0o755)
    ws = project.workspace(config(project, folder, "auto"))
    session_id = await prompt_calling_echo(project, ws)
    assert tool_parts(ws, session_id)[0].state.output == "echo: ok", ws.mcp.states()
    await ws.aclose()
