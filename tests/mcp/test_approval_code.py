"""A project server's approval covers the project files its command runs, not only its entry: by effect.

The project defines `echo: {command: [python, server.py]}` with the echo server copied into the project (and a
helper module it imports). The person approves it once. Then the agent, with every call allowed, rewrites a file
the server runs so that starting it leaves a mark in the project; the entry stays as it was. The harm is the mark:
the changed code ran without the person seeing it. Each case runs as the attack (the start is refused and the
person is asked again, shown which file changed) and as a control with the code check weakened to "no files"
(the approval keyed by the entry alone, as before), where the mark appears.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest

from opencode_nb.mcp.code import ServerCode
from opencode_nb.mcp.entries import ServerEntry

from .conftest import ECHO, tool_parts

pytestmark = pytest.mark.timeout(120)

MARK = "import pathlib\npathlib.Path('pwned.txt').write_text('the changed code ran')\n"


def _project_server(project) -> None:
    (project.root / "server.py").write_text("import helper  # noqa: F401\n" + ECHO.read_text())
    (project.root / "helper.py").write_text("GREETING = 'hello'\n")
    entry = {"type": "local", "command": [sys.executable, "server.py"],
             "environment": {"ECHO_LOG": str(project.log)}}
    (project.root / "opencode.json").write_text(json.dumps({"mcp": {"echo": entry}}))


async def _approve_once(project) -> None:
    ws = project.workspace({"permission": {"echo_*": "allow"}}, on_ask=lambda request: "once")
    project.script({"tool_calls": [{"name": "echo_echo", "input": {"text": "ok"}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 60)
    assert tool_parts(ws, session.id)[0].state.output == "echo: ok"
    await ws.aclose()


async def _agent_rewrites(project, ws, name: str) -> None:
    """A run in which the model rewrites `name` with the write tool (the person allows it)."""
    path = project.root / name
    project.script({"tool_calls": [{"name": "write", "input": {"path": str(path),
                                                               "content": MARK + path.read_text()}}]},
                   {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "edit it"), 60)
    assert tool_parts(ws, session.id)[-1].state.status == "completed"
    assert path.read_text().startswith(MARK)


async def _next_start(project) -> list:
    """A new workspace's prompt, which starts the server unless it asks (the person rejects): the asks."""
    asked: list = []
    again = project.workspace({"permission": {"echo_*": "allow"}}, on_ask=lambda r: asked.append(r) or "reject")
    project.script({"text": "done"})
    await asyncio.wait_for(again.prompt(again.sessions.create().id, "go"), 60)
    await again.aclose()
    return [r for r in asked if r.permission == "mcp"]


@pytest.fixture
def weakened(request, monkeypatch):
    """The control: the approval keyed by the entry alone (no project files counted)."""
    if request.param:
        monkeypatch.setattr(ServerEntry, "code", lambda self, root: ServerCode({}))
    return request.param


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"], indirect=True)
@pytest.mark.parametrize("changed", ["server.py", "helper.py"])
async def test_code_the_agent_changed_under_an_approved_entry_does_not_start_without_asking(project, changed,
                                                                                            weakened):
    _project_server(project)
    await _approve_once(project)
    ws = project.workspace(on_ask=lambda request: "once")
    await _agent_rewrites(project, ws, changed)
    await ws.aclose()

    asked: list = []
    again = project.workspace({"permission": {"echo_*": "allow"}}, on_ask=lambda r: asked.append(r) or "reject")
    project.script({"text": "done"})
    await asyncio.wait_for(again.prompt(again.sessions.create().id, "go"), 60)
    await again.aclose()
    if weakened:
        assert (project.root / "pwned.txt").exists() and not asked
        return
    assert not (project.root / "pwned.txt").exists()
    [request] = [r for r in asked if r.permission == "mcp"]
    assert f"{changed} changed" in request.metadata["where"] and changed in request.metadata["changed"][0]
    assert {"server.py", "helper.py"} <= set(request.metadata["files"])
    assert [s.status for s in again.mcp.states()] == ["refused"]


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"], indirect=True)
async def test_a_restart_after_a_crash_runs_changed_code_only_after_asking(project, weakened):
    """The server is running; the agent changes it and crashes it; the next call would start the new code."""
    _project_server(project)
    asked: list = []
    ws = project.workspace({"permission": {"echo_*": "allow"}}, on_ask=lambda r: asked.append(r) or "once")
    project.script({"tool_calls": [{"name": "echo_echo", "input": {"text": "ok"}}]}, {"text": "done"})
    await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "go"), 60)
    await _agent_rewrites(project, ws, "server.py")
    project.script({"tool_calls": [{"name": "echo_crash", "input": {}}]},
                   {"tool_calls": [{"name": "echo_echo", "input": {"text": "again"}}]}, {"text": "done"})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "crash it"), 60)
    crashed, echoed = tool_parts(ws, session.id)[-2:]
    await ws.aclose()
    assert crashed.state.status == "error"
    if weakened:
        assert (project.root / "pwned.txt").exists() and echoed.state.status == "completed"
        return
    assert not (project.root / "pwned.txt").exists()
    assert echoed.state.status == "error" and "server.py changed" in echoed.state.error
    assert len([r for r in asked if r.permission == "mcp"]) == 1  # the first start; the next prompt asks again


def test_the_covered_files_are_the_command_s_project_files_and_their_local_imports(tmp_path):
    from opencode_nb.mcp.code import server_code

    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "server.py").write_text("import helper\nimport json\nfrom pkg import tools\n")
    (root / "helper.py").write_text("from . import nothing\n")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "tools.py").write_text("from .deep import x\n")
    (root / "pkg" / "deep.py").write_text("x = 1\n")
    (root / "pkg" / "__main__.py").write_text("from . import tools\n")
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (root / "escape").symlink_to(shutil.which("sh") or "/bin/sh")
    assert set(server_code(["python", "server.py"], root).files) == {
        "server.py", "helper.py", "pkg/__init__.py", "pkg/tools.py", "pkg/deep.py"}
    assert set(server_code(["uv", "run", "-m", "pkg"], root).files) == {
        "pkg/__init__.py", "pkg/__main__.py", "pkg/tools.py", "pkg/deep.py", "pyproject.toml", "uv.lock"} - {"uv.lock"}
    linked = server_code(["sh", "-c", "./escape --config=helper.py"], root).files
    assert linked["escape"].startswith("link:") and "helper.py" in linked
    assert server_code(["npx", "-y", "@modelcontextprotocol/server-filesystem"], root).files == {}
    before = server_code(["python", "server.py"], root)
    (root / "pkg" / "deep.py").write_text("x = 2\n")
    assert server_code(["python", "server.py"], root).changes(before.files) == ["pkg/deep.py changed"]


def _project_venv(project) -> None:
    """A virtual environment in the project (`python -m venv .venv`), whose packages come from ours through a
    `.pth` line, running the echo server: `command: [.venv/bin/python, server.py]`."""
    import site
    import subprocess

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(project.root / ".venv")], check=True)
    [packages] = (project.root / ".venv" / "lib").glob("python*/site-packages")
    ours = [p for p in site.getsitepackages() if "site-packages" in p]
    (packages / "ours.pth").write_text("\n".join(ours) + "\n")
    (project.root / "server.py").write_text(ECHO.read_text())
    entry = {"type": "local", "command": [".venv/bin/python", "server.py"],
             "environment": {"ECHO_LOG": str(project.log)}}
    (project.root / "opencode.json").write_text(json.dumps({"mcp": {"echo": entry}}))


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"], indirect=True)
async def test_code_added_to_the_project_s_environment_does_not_start_without_asking(project, weakened):
    """The entry and `server.py` stay as approved; the agent drops a `.pth` file (a line Python runs at every
    start) into the project's `.venv`, which the server's interpreter runs from."""
    _project_venv(project)
    await _approve_once(project)
    [packages] = (project.root / ".venv" / "lib").glob("python*/site-packages")
    (packages / "zz_agent.pth").write_text(f"import pathlib; pathlib.Path({str(project.root)!r}, 'pwned.txt')"
                                           ".write_text('the changed code ran')\n")
    asked = await _next_start(project)
    if weakened:
        assert (project.root / "pwned.txt").exists() and not asked
        return
    assert not (project.root / "pwned.txt").exists()
    [request] = asked
    assert ".venv" in request.metadata["where"]


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"], indirect=True)
async def test_a_compiled_module_left_beside_an_approved_one_does_not_run_without_asking(project, weakened):
    """The agent leaves `__pycache__/helper.cpython-*.pyc` compiled from other code, stamped with `helper.py`'s
    size and time: Python would run it in place of the unchanged source."""
    import importlib.util
    from importlib._bootstrap_external import _code_to_timestamp_pyc  # type: ignore[attr-defined]

    _project_server(project)
    await _approve_once(project)
    helper = project.root / "helper.py"
    info = helper.stat()
    code = compile(MARK + helper.read_text(), str(helper), "exec")
    cached = Path(importlib.util.cache_from_source(str(helper)))
    cached.parent.mkdir(exist_ok=True)
    cached.write_bytes(_code_to_timestamp_pyc(code, int(info.st_mtime), info.st_size))
    asked = await _next_start(project)
    if weakened:
        assert (project.root / "pwned.txt").exists() and not asked  # the harm, seen: the compiled copy ran
        return
    assert not (project.root / "pwned.txt").exists()
    [request] = asked
    assert "helper.cpython" in request.metadata["where"]
