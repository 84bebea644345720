"""A bash deny rule holds however the denied command is dressed: run for real, the file is still there.

Patterns keep a command's leading assignments and redirects as written (`FOO=1 rm x`, `rm x > log`), so
each command is also checked by its bare words; these run the spellings that change made possible through
the whole loop, under `{"*": allow, "rm *": deny}`, with nobody present to answer an ask.
"""

from __future__ import annotations

import asyncio
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
