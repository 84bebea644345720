"""Diffs and listings of checkpoints pass redaction: `opencode-nb diff|checkpoints`, `ws.checkpoints.diff` and
`steps`, `%agent diff`, `%agent checkpoints` and an undo's conflict never show a `.env` value or a known
secret in clear, not even an old value no file holds any more (nobody learned it, so only the file's kind
can tell it is one)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from opencode_nb.checkpoint import service
from opencode_nb.kernel.magics import checkpoints as magics
from opencode_nb.kernel.notebook.journal import Journal

from .conftest import open_workspace, write

OLD_KEY = "sk_live_OLDVALUE0123456789abcdef"
NEW_KEY = "sk_live_NEWVALUE9876543210fedcba"
SHORT = "hunter2"
API_KEY = "key-abcdefghijklmnop1234567890"
ENV_OLD = f"# old key: {OLD_KEY}\nSTRIPE_KEY={OLD_KEY}\nDB_PASSWORD={SHORT}\n"
ENV_NEW = f"STRIPE_KEY={NEW_KEY}\nDB_PASSWORD=hunter3\n"
SECRETS = (OLD_KEY, NEW_KEY, SHORT, "hunter3", API_KEY)


def clear(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


async def two_turns(project, tmp_path, monkeypatch):
    monkeypatch.setenv("SERVICE_API_KEY", API_KEY)
    ws, _ = open_workspace(project, tmp_path / "data", [
        write(".env", ENV_OLD), {"text": "ok"},
        write(".env", ENV_NEW), {"text": "ok"}, write("settings.py", f"KEY = {API_KEY!r}\n"), {"text": "ok"}])
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "add the keys"), 30)
    await asyncio.wait_for(ws.prompt(session.id, f"rotate to {NEW_KEY}"), 30)
    return ws, session


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"])
async def test_the_diffs_and_listings_of_the_workspace_and_the_kernel_show_no_secret(
        project, tmp_path, monkeypatch, weakened):
    if weakened:
        monkeypatch.setattr(service, "redact_patch", lambda text: text)
    ws, session = await two_turns(project, tmp_path, monkeypatch)
    shown = [ws.checkpoints.diff(session.id), ws.checkpoints.diff(session.id, 1),
             *(text for _, text in ws.checkpoints.steps(session.id, 2)),
             *magics.diff(ws, session.id, "2").values(), *magics.diff(ws, session.id, None).values()]
    listed = [*magics.checkpoints(ws, Journal(), None, session.id).values()]
    ws.close()
    if weakened:
        assert clear("".join(shown)), "the test no longer sees the secrets it is about"
        return
    assert "-STRIPE_KEY=[redacted: .env:STRIPE_KEY]" in shown[0] and "+DB_PASSWORD=[redacted" in shown[0]
    assert "KEY = '[redacted: SERVICE_API_KEY]'" in shown[2] or "[redacted" in "".join(shown[2:4])
    for text in [*shown, *listed]:
        assert clear(text) == [], text


async def test_the_terminal_shows_no_secret_either(project, tmp_path, monkeypatch):
    ws, session = await two_turns(project, tmp_path, monkeypatch)
    await ws.aclose()
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "data" / "xdg"), "HOME": str(tmp_path / "data"),
           "OPENCODE_NB_DATA_DIR": str(tmp_path / "data")}
    for args in (["diff", session.id, "1"], ["diff", session.id], ["checkpoints", session.id]):
        proc = subprocess.run([sys.executable, "-m", "opencode_nb.cli", *args], cwd=project, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() and clear(proc.stdout + proc.stderr) == [], proc.stdout


async def test_an_undo_conflict_over_a_secret_file_shows_no_value(project, tmp_path, monkeypatch):
    ws, session = await two_turns(project, tmp_path, monkeypatch)
    (project / ".env").write_text(f"STRIPE_KEY={NEW_KEY}x\n")  # the person's edit after the turn
    asked = []

    async def no(conflict):
        asked.append(conflict)
        return False

    report = await ws.undo(session.id, confirm=no)
    ws.close()
    [conflict] = [c for c in asked if c.path == ".env"]
    assert "STRIPE_KEY=[redacted" in conflict.diff and clear(conflict.diff) == [], conflict.diff
    assert clear(report.text()) == []


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"])
async def test_a_secret_a_turn_copies_into_a_plain_file_is_hidden_in_its_diff(project, tmp_path, weakened,
                                                                              monkeypatch):
    """The person's `.env` was there before the session; the turn copies its values into `config.py`, a file
    of no secret kind: the values are known (the `.env` was learned), so the diff hides them wherever they
    land. (A value shorter than `secrets.MIN_LENGTH` is hidden only inside a file of a secret kind: hiding
    `hunter2` everywhere would hide every short word that happens to match.)"""
    if weakened:
        monkeypatch.setattr(service, "redact_patch", lambda text: text)
    (project / ".env").write_text(f"STRIPE_KEY={OLD_KEY}\nDB_PASSWORD={SHORT}\n")
    ws, _ = open_workspace(project, tmp_path / "data", [
        {"tool_calls": [{"name": "bash", "input": {"description": "copy", "command":
                         "sed -n 's/^STRIPE_KEY=\\(.*\\)/KEY = \"\\1\"/p; s/^DB_PASSWORD=\\(.*\\)/PW = \"\\1\"/p' "
                         ".env > config.py"}}]}, {"text": "ok"}])
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "inline the settings"), 30)
    assert OLD_KEY in (project / "config.py").read_text()
    shown = ws.checkpoints.diff(session.id) + "".join(text for _, text in ws.checkpoints.steps(session.id, 1))
    ws.close()
    if weakened:
        assert OLD_KEY in shown
        return
    assert "config.py" in shown and OLD_KEY not in shown and "[redacted: .env:STRIPE_KEY]" in shown, shown


def test_a_secret_file_whose_name_git_quotes_is_masked_and_named_as_it_is():
    from opencode_nb.checkpoint.text import redact_patch

    patch = ('diff --git "a/q\\"/.env" "b/q\\"/.env"\nnew file mode 100644\n--- /dev/null\n+++ "b/q\\"/.env"\n'
             "@@ -0,0 +1 @@\n+K=plainvalue\n")
    shown = redact_patch(patch)
    assert "plainvalue" not in shown and '+K=[redacted: q"/.env:K]' in shown, shown
