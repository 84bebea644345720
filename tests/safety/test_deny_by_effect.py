"""A bash deny rule holds however the denied command is dressed: run for real, the file is still there.

Patterns keep a command's leading assignments and redirects as written (`FOO=1 rm x`, `rm x > log`), so
each command is also checked by its bare words; these run the spellings that change made possible through
the whole loop, under `{"*": allow, "rm *": deny}`, with nobody present to answer an ask.

vi's family is told to run shell commands by its options (`vim -es -c '!rm x'`); those run for real in the OS
sandbox, with a person who answers "always" to everything: the deny holds without asking, and with vi's
options left unread (the control) the approved line removes the file.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from opencode_nb import Workspace
from opencode_nb.provider import Scripted

RULES = {"*": "allow", "bash": {"*": "allow", "rm *": "deny"}}


def run(tmp_path: Path, command: str) -> tuple[Path, str]:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "victim.txt").write_text("keep me")
    ws = Workspace(root, {"model": "scripted/demo", "permission": RULES}, data_dir=tmp_path / "data",
                   env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)})
    ws.providers.register("scripted", Scripted([{"tool_calls": [{"name": "bash", "input": {"command": command}}]},
                                                {"text": "done"}]))

    async def go() -> str:
        await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "go"), 30)
        [part] = [p for m in ws.sessions.messages(ws.sessions.list()[0].id) for p in m.parts if p.type == "tool"]
        return part.state.status

    try:
        return root, asyncio.run(go())
    finally:
        ws.close()


@pytest.mark.parametrize("command", [
    "rm victim.txt",
    "FOO=1 rm victim.txt",
    "FOO=1 BAR='a b' rm -f victim.txt",
    "rm victim.txt > log.txt",
    "rm victim.txt 2>/dev/null",
    "rm > /dev/null victim.txt",
    "echo ok > note.txt && rm victim.txt",
    "true | FOO=1 rm victim.txt > /dev/null",
    "env FOO=1 rm victim.txt",
])
def test_a_denied_command_does_not_run_however_it_is_dressed(tmp_path, command):
    root, status = run(tmp_path, command)
    assert (root / "victim.txt").read_text() == "keep me"
    assert status == "error"


@pytest.mark.parametrize(("command", "made"), [
    ("echo ok > made.txt", "made.txt"),
    ("FOO=1 touch made.txt", "made.txt"),
])
def test_allowed_commands_with_the_same_dressing_do_run(tmp_path, command, made):
    root, status = run(tmp_path, command)
    assert status == "completed" and (root / made).exists()


# ---------------------------------------------------------------------------------------------- vi's family

VI_LINES = [
    "vim -es -c '!rm victim.txt' -c 'qa!'",
    "vim -es '+r !rm victim.txt' '+qa!'",
    "vim -esc 'silent !rm victim.txt' -c 'qa!'",
    "ex -s --cmd '!rm victim.txt' -c 'qa!'",
    "nvim --headless -c '!rm victim.txt' -c 'qa!'",
    "nvim --headless -c '%!rm victim.txt' -c 'qa!' notes.md",
]


def run_approving(tmp_path: Path, command: str, sandbox: str) -> tuple[Path, str, list[str]]:
    """`run`, with the OS sandbox as given and a person who answers "always" to every ask."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "victim.txt").write_text("keep me")
    (root / "notes.md").write_text("# notes\n")
    asked: list[str] = []

    def person(request) -> str:
        asked.append(request.permission)
        return "always"

    ws = Workspace(root, {"model": "scripted/demo", "permission": RULES, "sandbox": sandbox},
                   data_dir=tmp_path / "data", on_ask=person,
                   env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)})
    ws.providers.register("scripted", Scripted([{"tool_calls": [{"name": "bash", "input": {"command": command}}]},
                                                {"text": "done"}]))

    async def go() -> str:
        await asyncio.wait_for(ws.prompt(ws.sessions.create().id, "go"), 30)
        [part] = [p for m in ws.sessions.messages(ws.sessions.list()[0].id) for p in m.parts if p.type == "tool"]
        return part.state.status

    try:
        return root, asyncio.run(go()), asked
    finally:
        ws.close()


@pytest.fixture
def sandbox_on() -> str:
    from opencode_nb.sandbox.policy import Backend, find_backend

    found = find_backend()
    if not isinstance(found, Backend):
        pytest.skip(f"no working OS sandbox here: {found}")
    return "required"


@pytest.mark.parametrize("command", VI_LINES)
def test_a_denied_command_vi_is_told_to_run_does_not_run_whatever_the_person_approves(tmp_path, command,
                                                                                      sandbox_on, monkeypatch):
    program = command.split()[0]
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed here")
    monkeypatch.setenv("HOME", str(tmp_path))
    root, status, asked = run_approving(tmp_path, command, sandbox_on)
    assert (root / "victim.txt").read_text() == "keep me"
    assert status == "error" and asked == []  # denied outright: nothing was put to the person


@pytest.mark.parametrize("command", VI_LINES[:1] + VI_LINES[4:5])
def test_with_vi_read_only_as_hiding_its_commands_the_approved_line_removes_the_file(tmp_path, command,
                                                                                     sandbox_on, monkeypatch):
    """The control: vi's options unread (only its `always` reason left), the person's "always" lets it run."""
    from opencode_nb.tool.shell.runners import COMMAND_RUNNERS, CommandRunner

    program = command.split()[0]
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed here")
    monkeypatch.setitem(COMMAND_RUNNERS, program, CommandRunner(always=COMMAND_RUNNERS[program].always))
    monkeypatch.setenv("HOME", str(tmp_path))
    root, status, asked = run_approving(tmp_path, command, sandbox_on)
    assert not (root / "victim.txt").exists()
    assert status == "completed" and asked == ["bash"]
