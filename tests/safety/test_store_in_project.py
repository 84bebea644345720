"""The data dir inside the project (the project is HOME, the data dir the default `~/.local/share/opencode_nb`):
tried by effect, in real bubblewrap, everything allowed. What a sandboxed command could do there before the
data dir was kept out of sight (`sandbox/private.py`):

- append `core.fsmonitor = <cmd>` to the checkpoint store's git config: git, run by the kernel outside any
  sandbox at the next snapshot, then ran the command there;
- rewrite the session database, plant an approval in `mcp-approved.json`, write into another MCP server's
  package cache (code that server runs later).

Each test has a control: the same attack with the guard weakened (the data dir no longer hidden, and for the
store its own config check off too), which must show the harm, so the test is known to see it."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from opencode_nb import Workspace
from opencode_nb.checkpoint import gitconfig
from opencode_nb.provider import Scripted
from opencode_nb.sandbox import caches, private


def bash(command: str) -> dict:
    return {"tool_calls": [{"name": "bash", "input": {"command": command, "description": "run"}}]}


@dataclass
class Home:
    base: Path
    home: Path
    data: Path


@pytest.fixture
def home(monkeypatch) -> Iterator[Home]:
    base = Path(tempfile.mkdtemp(prefix="opencode-nb-store-", dir="/var/tmp"))  # not under the sandbox's /tmp
    home = base / "home"
    (home / ".config" / "opencode_nb").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.delenv(private.DATA_DIR_ENV, raising=False)
    try:
        yield Home(base, home, home / ".local" / "share" / "opencode_nb")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def weaken(monkeypatch, *, store_too: bool) -> None:
    """The guard taken away: the data dir in sight again (and the store's own check off)."""
    monkeypatch.setattr(private, "folders", lambda: [])
    if store_too:
        monkeypatch.setattr(gitconfig, "COMMAND_LINE", ())
        monkeypatch.setattr(gitconfig, "verify", lambda git_dir: [])


async def run(where: Home, *commands: str) -> tuple[Workspace, list[str]]:
    ws = Workspace(where.home, {"model": "scripted/demo", "permission": {"*": "allow"}, "sandbox": "required"},
                   data_dir=where.data, env={"HOME": str(where.home), "XDG_CONFIG_HOME": str(where.home / ".config"),
                                             "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    ws.providers.register("scripted", Scripted([*(bash(c) for c in commands), {"text": "ok"}]))
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 60)
    labels = [p.state.metadata.get("sandbox") for m in ws.sessions.messages(session.id) for p in m.parts
              if p.type == "tool"]
    return ws, labels


async def fsmonitor_attack(where: Home) -> bool:
    ran = where.base / "ran-outside"
    plant = (f'cfg=$(ls -d {where.data}/checkpoints/*.git)/config && '
             f'printf "[core]\\n\\tfsmonitor = \\"touch {ran}; echo\\"\\n" >> "$cfg"')
    ws, labels = await run(where, plant, "echo again > x.txt")
    try:
        assert labels == ["bwrap", "bwrap"]
        return ran.exists()
    finally:
        ws.close()


async def test_a_command_cannot_make_the_checkpoint_stores_git_run_its_code(bwrap, home):
    assert not await fsmonitor_attack(home), "git ran the command's fsmonitor outside the sandbox"


async def test_control_with_the_guard_weakened_git_runs_it(bwrap, home, monkeypatch):
    weaken(monkeypatch, store_too=True)
    assert await fsmonitor_attack(home), "the test no longer sees the attack succeed"


async def test_the_store_alone_refuses_a_tampered_config(bwrap, home, monkeypatch):
    """The second line by itself: the data dir in sight, the store's config check still on."""
    weaken(monkeypatch, store_too=False)
    assert not await fsmonitor_attack(home)


def siblings(where: Home, ws: Workspace) -> dict[str, Path]:
    folder = caches.project_folder(where.data, where.home)
    return {"session database": ws.store_path, "approvals": where.data / "mcp-approved.json",
            "another server's cache": folder / caches.user_name("other") / "uv" / "planted.py",
            "config guard records": where.data / "config-guard" / "planted.json",
            "quarantine": where.data / "quarantine" / "planted"}


async def sibling_attack(where: Home) -> tuple[dict[str, bool], dict[str, bool]]:
    """Each of our files written by a command; what changed, and whether the command's own folders (its
    tool output, its cache) stayed writable."""
    probe = Workspace(where.home, {"model": "scripted/demo"}, data_dir=where.data,
                      env={"HOME": str(where.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    targets = siblings(where, probe)
    probe.close()
    before = {name: path.read_bytes() if path.exists() else None for name, path in targets.items()}
    own = caches.project_folder(where.data, where.home) / caches.COMMANDS
    writes = " ; ".join(f'mkdir -p "{p.parent}" ; printf planted >> "{p}"' for p in targets.values())
    mine = f'echo out > "{where.data}/tool-output/mine.txt" ; echo c > "{own}/mine.txt"'
    ws, labels = await run(where, f"{writes} ; {mine} ; true")
    try:
        assert labels == ["bwrap"]
        changed = {name: (path.read_bytes() if path.exists() else None) != before[name]
                   for name, path in targets.items()}
        kept = {"tool output": (where.data / "tool-output" / "mine.txt").is_file(),
                "own cache": (own / "mine.txt").is_file()}
        return changed, kept
    finally:
        ws.close()


async def test_a_command_cannot_write_the_data_dirs_other_files(bwrap, home):
    changed, kept = await sibling_attack(home)
    assert not any(changed.values()), changed
    assert all(kept.values()), kept


async def test_control_with_the_data_dir_in_sight_they_are_written(bwrap, home, monkeypatch):
    weaken(monkeypatch, store_too=False)
    changed, _ = await sibling_attack(home)
    assert all(changed.values()), changed


async def test_a_data_dir_that_is_the_project_refuses_to_run(bwrap, home):
    ws = Workspace(home.home, {"model": "scripted/demo", "permission": {"*": "allow"}, "sandbox": "required"},
                   data_dir=home.home, env={"HOME": str(home.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    ws.providers.register("scripted", Scripted([bash("echo hi > x.txt"), {"text": "ok"}]))
    try:
        session = ws.sessions.create()
        await asyncio.wait_for(ws.prompt(session.id, "go"), 60)
        parts = [p for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool"]
        assert parts[0].state.status == "error" and "data dir" in parts[0].state.error
        assert not (home.home / "x.txt").exists()
    finally:
        ws.close()


async def worker_reads_the_database(where: Home) -> str:
    """The python worker (its own bubblewrap) reading the session database of an open workspace."""
    from opencode_nb.kernel.python.worker import run_in_worker

    ws = Workspace(where.home, {"model": "scripted/demo"}, data_dir=where.data,
                   env={"HOME": str(where.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    try:
        code = f"import os\nprint('SEEN' if os.path.exists({str(ws.store_path)!r}) else 'UNSEEN')"
        run = await run_in_worker(code, {}, confine=True, required=True)
        assert run.error is None, run.error
        return run.output
    finally:
        ws.close()


async def test_the_python_worker_does_not_see_the_data_dir(bwrap, home):
    assert "UNSEEN" in await worker_reads_the_database(home)


async def test_control_the_worker_sees_it_with_the_guard_weakened(bwrap, home, monkeypatch):
    weaken(monkeypatch, store_too=False)
    assert "SEEN" in (await worker_reads_the_database(home)).replace("UNSEEN", "")


@pytest.mark.parametrize("place", ["inside the project", "outside the project", "around the project",
                                   "named by the variable"])
async def test_the_data_dir_is_out_of_sight_wherever_it_is(bwrap, home, monkeypatch, place):
    """Wherever the data dir is, a command sees none of it but its tool-output folder, and the project stays
    as writable (and its protected files as read-only) as without it."""
    project = home.home if place != "around the project" else home.base / "data" / "proj"
    data = {"inside the project": home.data, "outside the project": home.base / "elsewhere",
            "around the project": home.base / "data", "named by the variable": home.base / "by-variable"}[place]
    project.mkdir(parents=True, exist_ok=True)
    (project / "AGENTS.md").write_text("be careful\n")
    env = {"HOME": str(home.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if place == "named by the variable":
        monkeypatch.setenv(private.DATA_DIR_ENV, str(data))
        env[private.DATA_DIR_ENV] = str(data)
    ws = Workspace(project, {"model": "scripted/demo", "permission": {"*": "allow"}, "sandbox": "required"},
                   data_dir=None if place == "named by the variable" else data, env=env)
    command = (f'ls "{data}/sessions" > seen.txt 2>&1 ; echo out > "{data}/tool-output/mine.txt" ; '
               'echo new > made.txt ; printf "echo x >> AGENTS.md\\n" > s.sh ; sh s.sh ; true')
    ws.providers.register("scripted", Scripted([bash(command), {"text": "ok"}]))
    try:
        assert ws.data_dir == data
        session = ws.sessions.create()
        await asyncio.wait_for(ws.prompt(session.id, "go"), 60)
        states = [p.state for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool"]
        assert [s.status for s in states] == ["completed"], states
        assert ws.store_path.is_file()
        assert ws.store_path.name not in (project / "seen.txt").read_text()
        assert "No such file" in (project / "seen.txt").read_text()
        assert "Read-only file system" in states[0].output  # AGENTS.md, kept read-only under the replay
        assert (data / "tool-output" / "mine.txt").is_file()
        assert (project / "made.txt").read_text() == "new\n"
        assert (project / "AGENTS.md").read_text() == "be careful\n"
    finally:
        ws.close()
