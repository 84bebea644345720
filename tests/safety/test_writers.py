"""The product's own writers never write through a link a command planted, checked by effect.

Each attack is run for real: a scripted model's bash call under `{"*": allow}`, the sandbox required (real
bubblewrap), in a project under /var/tmp with a temporary HOME whose `.profile` must stay as it was. The
command's output spills past the inline size into the tool-output folder (writable to commands, so the model
can be pointed at it) and the command then swaps the saved file, or the name the redaction pass used to
stage its copy at, for a link to `$HOME/.profile`; after the command the kernel redacts the saved output.
Plans and notebooks are tried the same way, their file or folder replaced by a link to the HOME.

Every attack has a control run with the product's writer weakened (the old path-following code put back),
which sees the harm: the test can tell.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from opencode_nb import Workspace, fs, secrets
from opencode_nb.provider import Scripted
from opencode_nb.tool.shell import process

KEY = "sk-ant-writers-7c3e1a9d5b2f8e4c6a0d"
PROFILE = "# the person's profile\nexport PATH=$HOME/bin:$PATH\n"
ATTACK = r"""
import os, sys, time
out, variant, target, key = sys.argv[1:5]
names = lambda: set(os.listdir(out)) if os.path.isdir(out) else set()
before = names()
sys.stdout.write(("x" * 99 + "\n") * 12000)  # 1.2 MB: past the inline size, so the kernel saves it
sys.stdout.flush()
new = []
for _ in range(200):
    new = sorted(n for n in names() - before if not n.endswith(".redacted"))
    if new:
        break
    time.sleep(0.05)
saved = os.path.join(out, new[-1])
if variant == "sibling":
    os.symlink(target, saved + ".redacted")
else:
    os.unlink(saved)
    os.symlink(target, saved)
print(key)  # a secret in the output: the kernel's redaction pass rewrites the saved file
sys.stdout.flush()
"""


class Stage:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "proj"
        self.home = base / "home"
        self.data = base / "data"
        for folder in (self.root, self.home):
            folder.mkdir()
        (self.home / ".profile").write_text(PROFILE)
        (self.root / "attack.py").write_text(ATTACK)
        self.workspaces: list[Workspace] = []

    def workspace(self, sandbox: str = "required") -> Workspace:
        ws = Workspace(self.root, {"model": "scripted/demo", "sandbox": sandbox, "permission": {"*": "allow"}},
                       data_dir=self.data, on_ask=lambda request: "always",
                       env={"XDG_CONFIG_HOME": str(self.base / "xdg"), "HOME": str(self.home),
                            "ANTHROPIC_API_KEY": KEY})
        self.workspaces.append(ws)
        return ws

    def close(self) -> None:
        for ws in self.workspaces:
            ws.close()


@pytest.fixture
def stage(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stage]:
    base = Path(tempfile.mkdtemp(prefix="opencode-nb-writers-", dir="/var/tmp"))
    monkeypatch.setenv("HOME", str(base / "home"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # a key the redactor knows, as in a kernel that exported it
    secrets.refresh()
    made = Stage(base)
    yield made
    made.close()
    shutil.rmtree(base, ignore_errors=True)


async def bash(ws: Workspace, command: str) -> Any:
    ws.providers.register("scripted", Scripted([{"tool_calls": [{"name": "bash", "input": {"command": command}}]},
                                                {"text": "done"}]))
    session = ws.sessions.create().id
    await asyncio.wait_for(ws.prompt(session, "go"), 60)
    return [p.state for m in ws.sessions.messages(session) for p in m.parts if p.type == "tool"][-1]


def old_redaction(self: process.Capture) -> None:
    """The redaction pass as it was: read the saved file by name, stage a copy by a name beside it, rename."""
    assert self.path is not None and self.file is not None
    self.file.close()
    text = self.path.read_text(encoding="utf-8")
    redacted = secrets.redact(text)
    if redacted != text:
        staged = self.path.with_name(self.path.name + ".redacted")
        staged.write_text(redacted, encoding="utf-8")
        os.replace(staged, self.path)


def naive_write_file(root: Path, relative: str | Path, data: bytes, **_: Any) -> None:
    """A writer that opens the path and writes, following whatever links are on it."""
    with open(Path(root) / relative, "wb") as out:
        out.write(data)


def weaken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The product's writer (and its reader) put back to plain path-following calls."""
    monkeypatch.setattr(fs, "write_file", naive_write_file)
    monkeypatch.setattr(fs, "read_file", lambda root, relative, **_: (Path(root) / relative).read_bytes())
    monkeypatch.setattr(fs, "lstat", lambda root, relative: os.stat(Path(root) / relative))


def attack(stage: Stage, variant: str) -> str:
    out = stage.data / "tool-output"
    return f"python3 attack.py {out} {variant} {stage.home / '.profile'} {KEY}"


# ------------------------------------------------------------------------------------------ saved output

@pytest.mark.parametrize("variant", ["sibling", "saved"])
async def test_a_command_cannot_steer_the_redaction_pass_into_home(bwrap, stage, variant):
    ws = stage.workspace()
    state = await bash(ws, attack(stage, variant))
    assert state.status == "completed" and state.metadata["sandbox"] == "bwrap", state
    assert (stage.home / ".profile").read_text() == PROFILE
    saved = Path(state.metadata["output_path"])
    assert not saved.is_symlink() and saved.read_text().count("x" * 99) == 12000
    assert KEY not in saved.read_text() and "[redacted: ANTHROPIC_API_KEY]" in saved.read_text()


@pytest.mark.parametrize(("variant", "weakened"), [("sibling", "old redaction"), ("saved", "naive writer")])
async def test_control_with_the_writer_weakened_the_same_attack_writes_into_home(
        bwrap, stage, monkeypatch, variant, weakened):
    if weakened == "old redaction":
        monkeypatch.setattr(process.Capture, "_finish_saved", old_redaction)
    else:
        monkeypatch.setattr(fs, "write_file", naive_write_file)
    ws = stage.workspace()
    state = await bash(ws, attack(stage, variant))
    assert state.status == "completed" and state.metadata["sandbox"] == "bwrap", state
    assert (stage.home / ".profile").read_text() != PROFILE  # the harm the guarded run does not do


# ------------------------------------------------------------------------------------------ plans


PLAN = "# Tidy\n\nGoal: tidy.\n\n1. [ ] Sort the imports\n2. [ ] Run the tests\n"


def tick_plan(stage: Stage, ws: Workspace) -> None:
    """Step 1 of a plan finishes: the kernel ticks it in the plan file, as `kernel/plans/steps.py` does."""
    from opencode_nb.kernel.plans import steps
    from opencode_nb.kernel.plans.store import Plan
    from opencode_nb.tool.support.plandoc import parse_plan

    path = ".opencode/plans/tidy.md"
    session = ws.sessions.create()
    plan = Plan("tidy", session, path, stage.root / path, PLAN, parse_plan(PLAN, path))
    steps._finish(ws, plan, 1, "done", 0.0, "sorted", "")


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "control"])
def test_a_plan_file_replaced_by_a_link_is_not_written_through(stage, monkeypatch, weakened):
    """The plan file became a link to a file in HOME holding the same plan (so a tick would apply): the
    tick must leave the HOME file alone (the link is neither read nor written through)."""
    if weakened:
        weaken(monkeypatch)
    outside = stage.home / "tidy.md"
    outside.write_text(PLAN)
    plans = stage.root / ".opencode" / "plans"
    plans.mkdir(parents=True)
    (plans / "tidy.md").symlink_to(outside)
    ws = stage.workspace("off")
    tick_plan(stage, ws)
    if weakened:
        assert outside.read_text() != PLAN
        return
    assert outside.read_text() == PLAN


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "control"])
def test_a_plan_folder_replaced_by_a_link_gets_no_progress_file(stage, monkeypatch, weakened):
    """The plans folder became a link to HOME: the progress record is refused, not written into HOME."""
    if weakened:
        weaken(monkeypatch)
    (stage.root / ".opencode").mkdir()
    (stage.root / ".opencode" / "plans").symlink_to(stage.home)
    ws = stage.workspace("off")
    with contextlib.suppress(fs.Refused):
        tick_plan(stage, ws)
    made = sorted(p.name for p in stage.home.iterdir())
    assert (made != [".profile"]) is weakened, made


# ------------------------------------------------------------------------------------------ notebooks


def notebook_text() -> str:
    cell = {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": None, "outputs": [],
            "source": "print(1)"}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "control"])
def test_a_notebook_folder_replaced_by_a_link_is_not_saved_through(stage, monkeypatch, weakened):
    """Between reading and saving, the notebook's folder became a link to a HOME folder holding a copy with
    the same size and time (the check a save makes of the file): the save must not land in HOME."""
    from opencode_nb.kernel.notebook import nbfile

    if weakened:
        weaken(monkeypatch)
    folder = stage.root / "nb"
    folder.mkdir()
    (folder / "a.ipynb").write_text(notebook_text())
    doc = nbfile.load(folder / "a.ipynb")
    copy = stage.home / "work"
    copy.mkdir()
    shutil.copy2(folder / "a.ipynb", copy / "a.ipynb")
    folder.rename(stage.root / "nb-real")
    folder.symlink_to(copy)
    doc.data["cells"][0]["source"] = "print('changed')"
    with contextlib.suppress(fs.Refused, FileExistsError):
        nbfile.save(folder / "a.ipynb", doc)
    assert ("changed" in (copy / "a.ipynb").read_text()) is weakened


# ------------------------------------------------------------------------------------------ moving away


def naive_move(root: Path, relative: str | Path, dest_root: Path, dest_relative: str | Path, **_: Any) -> None:
    target = Path(dest_root) / dest_relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(Path(root) / relative), str(target))


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "control"])
def test_moving_away_what_a_command_made_never_moves_through_a_link(stage, monkeypatch, weakened):
    """`.claude` was a real folder with no `skills` in it when the command started; the command swapped it
    for a link to `~/.claude`, where the person's own skills are. Moving away "the skills folder the
    command made" must not take the person's."""
    from opencode_nb.sandbox.protected import Guard

    if weakened:
        monkeypatch.setattr(fs, "move", naive_move)
    (stage.root / ".claude").mkdir()
    skills = stage.home / ".claude" / "skills"
    (skills / "mine").mkdir(parents=True)
    (skills / "mine" / "SKILL.md").write_text("---\nname: mine\n---\n")
    guard = Guard.taken([stage.root / ".claude" / "skills"], [stage.root])
    (stage.root / ".claude").rename(stage.root / "claude-was")
    (stage.root / ".claude").symlink_to(stage.home / ".claude")
    said = guard.undo(stage.data / "quarantine")
    assert (skills / "mine" / "SKILL.md").exists() is not weakened, said
