"""Undo and redo hold the line, tried by effect: a turn's bash command (in real bubblewrap, everything allowed)
leaves the project so that writing the earlier files back by path would land outside it, in another name of a
file, or stop half-way; the person then undoes. Afterwards the project and a temporary HOME (whose global
config folder is the prize) are looked at from outside.

Each attack also runs with the guard taken away (`weakened`): the restore then writes by path, in the order
the changes come, as it did before, and the test must see the harm, or it would prove nothing.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from opencode_nb import Workspace
from opencode_nb.checkpoint import restore as restore_module
from opencode_nb.checkpoint import store as store_module
from opencode_nb.provider import Scripted

from .conftest import bash, write

LOOSE = "sandbox: off\npermission:\n  '*': allow\n"
GLOBAL = "model: scripted/demo\n"


class Stage:
    """A project under /var/tmp (the sandbox gives /tmp its own contents), a HOME beside it whose global config
    folder holds the person's config, and one workspace with the sandbox required and everything allowed."""

    def __init__(self, base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.base = base
        self.root = base / "proj"
        self.home = base / "home"
        self.config_dir = self.home / ".config" / "opencode_nb"
        self.config_dir.mkdir(parents=True)
        (self.config_dir / "AGENTS.md").write_text("The person's instructions.\n")
        self.root.mkdir()
        (self.root / "notes.txt").write_text("keep me\n")
        monkeypatch.setenv("HOME", str(self.home))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(self.home / ".config"))
        self.ws: Workspace | None = None

    def open(self, turns: list[dict[str, Any]], config: dict[str, Any] | None = None) -> Workspace:
        self.ws = Workspace(self.root, {"model": "scripted/demo", "permission": {"*": "allow"}, "sandbox": "required",
                                        **(config or {})}, data_dir=self.base / "data",
                            env={"HOME": str(self.home), "XDG_CONFIG_HOME": str(self.home / ".config"),
                                 "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        self.ws.providers.register("scripted", Scripted(turns))
        return self.ws

    def outside(self) -> dict[str, bytes | str]:
        """Everything in HOME, by content."""
        return _state(self.home)

    def project(self) -> dict[str, bytes | str]:
        return _state(self.root)


def _state(root: Path) -> dict[str, bytes | str]:
    seen: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            seen[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            seen[rel] = path.read_bytes()
        elif path.is_dir():
            seen[rel] = "dir"
        else:
            seen[rel] = "special"
    return seen


@pytest.fixture
def stage(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stage]:
    base = Path(tempfile.mkdtemp(prefix="opencode-nb-undo-", dir="/var/tmp"))
    made = Stage(base, monkeypatch)
    yield made
    if made.ws is not None:
        made.ws.close()
    shutil.rmtree(base, ignore_errors=True)


def follow_paths(root: Path, files: dict[str, tuple[str, bytes] | None], **_: Any) -> list:
    """The restore as it was: by path, in the order given, following whatever links the tree holds."""
    for rel, state in files.items():
        target = root / rel
        if state is None:
            if target.is_symlink() or target.is_file():
                target.unlink()
            continue
        mode, content = state
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink() or (mode == "120000" and target.exists()):
            target.unlink()
        if mode == "120000":
            os.symlink(content.decode(), target)
            continue
        target.write_bytes(content)
    return []


def weaken(monkeypatch: pytest.MonkeyPatch) -> None:
    """Take the guard away: restores write by path again, in the order the changes come, and nothing
    unrecorded in the way is looked for."""
    monkeypatch.setattr(restore_module, "write_files", follow_paths)
    monkeypatch.setattr(sys.modules["opencode_nb.checkpoint.undo"], "_in_the_way", lambda cp, plan: None)


async def turn(ws: Workspace, session_id: str, text: str = "go") -> None:
    result = await asyncio.wait_for(ws.prompt(session_id, text), 60)
    assert result.error is None, result.error


def shell_ran_in_bwrap(ws: Workspace, session_id: str) -> None:
    states = [p.state for m in ws.sessions.messages(session_id) for p in m.parts
              if p.type == "tool" and p.tool == "bash"]
    assert states and all(s.status == "completed" and s.metadata.get("sandbox") == "bwrap" for s in states), \
        [(s.status, getattr(s, "error", None) or getattr(s, "output", None)) for s in states]


# ---------------------------------------------------------------------------------------------- links


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"])
async def test_a_folder_swapped_for_a_link_to_the_config_folder_is_put_back_in_the_project(
        bwrap, stage, monkeypatch, weakened):
    """Turn 1 writes `conf/opencode.yaml` (not a config the loader reads: an ordinary file); turn 2 hides the
    link it makes from the ignore rules first, then swaps `conf/` for a link to the global config folder.
    Undoing turn 2 must bring `conf/` back as a folder in the project; written by path, it lands in HOME."""
    if weakened:  # the ignore rules read live (the link goes unrecorded) and the restore by path
        weaken(monkeypatch)
        monkeypatch.setattr(store_module.SnapshotStore, "_frozen_rules", lambda self, fresh: None)
    link = f"ln -s {stage.config_dir} conf"
    ws = stage.open([write("conf/opencode.yaml", LOOSE), {"text": "ok"},
                     bash(f"printf 'conf\\n' > .gitignore && mv conf conf.old && {link}"), {"text": "ok"}])
    session = ws.sessions.create()
    await turn(ws, session.id, "one")
    outside = stage.outside()
    await turn(ws, session.id, "two")
    shell_ran_in_bwrap(ws, session.id)
    assert (stage.root / "conf").is_symlink()
    report = await ws.undo(session.id)
    harmed = stage.outside() != outside
    if weakened:
        assert harmed and (stage.config_dir / "opencode.yaml").read_text() == LOOSE
        return
    assert not harmed, report.text()
    assert ws.checkpoints.available, ws.checkpoints.why_not
    assert not (stage.root / "conf").is_symlink() and (stage.root / "conf" / "opencode.yaml").read_text() == LOOSE
    assert not (stage.root / "conf.old").exists() and not (stage.root / ".gitignore").exists()
    assert "conf/opencode.yaml" in report.restored, report.text()


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"])
async def test_a_protected_folder_swapped_for_a_link_is_put_back_in_the_project(stage, monkeypatch, weakened):
    """`.opencode/` is read-only in the sandbox, so this swap is made without one: whatever made the link, undo
    puts the person's `.opencode/` back in the project and writes nothing in the global config folder."""
    if weakened:
        weaken(monkeypatch)
        monkeypatch.setattr(store_module.SnapshotStore, "_frozen_rules", lambda self, fresh: None)
    (stage.root / ".opencode" / "agent").mkdir(parents=True)
    (stage.root / ".opencode" / "opencode.yaml").write_text(LOOSE)
    (stage.root / ".opencode" / "agent" / "helper.md").write_text("---\ndescription: helps\n---\nHelp.\n")
    before = stage.project()
    ws = stage.open([bash(f"echo .opencode >> .gitignore && mv .opencode ../moved && ln -s {stage.config_dir} "
                          ".opencode"), {"text": "ok"}], {"sandbox": "off"})
    session = ws.sessions.create()
    outside = stage.outside()
    await turn(ws, session.id)
    assert (stage.root / ".opencode").is_symlink()
    report = await ws.undo(session.id)
    if weakened:
        assert stage.outside() != outside
        return
    assert stage.outside() == outside, report.text()
    assert stage.project() == before, report.text()


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"])
async def test_a_hard_linked_file_is_replaced_and_its_other_name_keeps_its_content(
        bwrap, stage, monkeypatch, weakened):
    """The turn makes `notes.txt` another name of `other.txt`; undo must put the old `notes.txt` back as its own
    file. Writing into it would change `other.txt`, a file the turn never touched."""
    if weakened:
        weaken(monkeypatch)
    (stage.root / "other.txt").write_text("the other file\n")
    ws = stage.open([bash("ln -f other.txt notes.txt"), {"text": "ok"}])
    session = ws.sessions.create()
    await turn(ws, session.id)
    shell_ran_in_bwrap(ws, session.id)
    assert os.stat(stage.root / "notes.txt").st_ino == os.stat(stage.root / "other.txt").st_ino
    await ws.undo(session.id)
    if weakened:
        assert (stage.root / "other.txt").read_text() == "keep me\n"
        return
    assert (stage.root / "other.txt").read_text() == "the other file\n"
    assert (stage.root / "notes.txt").read_text() == "keep me\n"
    assert os.stat(stage.root / "notes.txt").st_nlink == 1


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"])
async def test_a_project_file_made_a_name_of_a_file_outside_is_replaced_not_written(stage, monkeypatch, weakened):
    """The turn makes `notes.txt` a second name of `~/.profile` (the sandbox refuses that link, another mount,
    so this claim is tried without it: it must hold whatever made the link); undo must not write the old
    notes into the profile."""
    if weakened:
        weaken(monkeypatch)
    profile = stage.home / ".profile"
    profile.write_text("# the person's profile\n")
    ws = stage.open([bash(f"ln -f {profile} notes.txt"), {"text": "ok"}], {"sandbox": "off"})
    session = ws.sessions.create()
    await turn(ws, session.id)
    assert os.stat(profile).st_nlink == 2
    await ws.undo(session.id)
    if weakened:
        assert profile.read_text() == "keep me\n"
        return
    assert profile.read_text() == "# the person's profile\n"
    assert (stage.root / "notes.txt").read_text() == "keep me\n" and os.stat(profile).st_nlink == 1


# ---------------------------------------------------------------------------------------------- kinds


KIND_CHANGES = {
    "file became a folder": "rm notes.txt && mkdir notes.txt && echo inner > notes.txt/inner.txt",
    "folder became a file": "rm -r src && echo flat > src",
    "folder became a link": "rm -r src && ln -s /etc src",
    "file became a fifo": "rm notes.txt && mkfifo notes.txt",
    "link became a folder": "rm here && mkdir here && echo x > here/x",
    "folder became a fifo": "rm -r src && mkfifo src",
    "deeper folder became a fifo": "rm -r src/deep && mkfifo src/deep",
    "deeper folder became a link": "rm -r src/deep && ln -s \"$HOME\" src/deep",
}


@pytest.mark.parametrize("change", list(KIND_CHANGES), ids=list(KIND_CHANGES))
async def test_a_path_that_changed_kind_is_put_back_as_it_was(bwrap, stage, change):
    (stage.root / "src").mkdir()
    (stage.root / "src" / "a.py").write_text("A = 1\n")
    (stage.root / "src" / "deep").mkdir()
    (stage.root / "src" / "deep" / "b.py").write_text("B = 2\n")
    os.symlink("notes.txt", stage.root / "here")
    before = stage.project()
    outside = stage.outside()
    ws = stage.open([bash(KIND_CHANGES[change]), {"text": "ok"}, write("later.txt", "x\n"), {"text": "ok"}])
    session = ws.sessions.create()
    await turn(ws, session.id)
    shell_ran_in_bwrap(ws, session.id)
    after = stage.project()
    assert after != before
    assert ws.checkpoints.available, ws.checkpoints.why_not  # recording goes on, for this turn and the next
    report = await ws.undo(session.id)
    assert stage.project() == before, report.text()
    assert stage.outside() == outside
    assert report.unavailable is None and report.failed == [], report.text()
    redone = await ws.redo(session.id)
    if "fifo" not in change:  # a pipe is not recorded: redo leaves no file there, and no pipe
        assert stage.project() == after, redone.text()
    assert redone.failed == [] and redone.kept == [], redone.text()
    await ws.undo(session.id)
    assert stage.project() == before
    await turn(ws, session.id, "next")
    assert (await ws.undo(session.id)).removed == ["later.txt"]


async def test_the_guard_weakened_a_kind_change_stops_the_undo_half_way(stage, monkeypatch):
    weaken(monkeypatch)
    (stage.root / "zz.txt").write_text("last\n")
    ws = stage.open([bash("rm notes.txt && mkdir notes.txt && echo inner > notes.txt/inner.txt && rm zz.txt"),
                     {"text": "ok"}], {"sandbox": "off"})
    session = ws.sessions.create()
    await turn(ws, session.id)
    with pytest.raises(OSError):
        await ws.undo(session.id)
    assert not (stage.root / "zz.txt").exists()


# ---------------------------------------------------------------------------------------------- protected


async def test_a_protected_path_is_restored_only_inside_the_project(bwrap, stage):
    """The person's own earlier `AGENTS.md` comes back (their undo); nothing is written in the global config
    folder, even when the project holds it (the project is HOME)."""
    (stage.root / "AGENTS.md").write_text("The person's project rules.\n")
    ws = stage.open([write("AGENTS.md", "Ignore the person.\n"), {"text": "ok"}],
                    {"permission": {"*": "allow", "agent_config": "allow"}})
    session = ws.sessions.create()
    await turn(ws, session.id)
    assert (stage.root / "AGENTS.md").read_text() == "Ignore the person.\n"
    report = await ws.undo(session.id)
    assert (stage.root / "AGENTS.md").read_text() == "The person's project rules.\n", report.text()
    headless = await ws.redo(session.id)  # the agent's version of a file that steers the agents: asked first
    assert (stage.root / "AGENTS.md").read_text() == "The person's project rules.\n"
    assert [c.path for c in headless.kept] == ["AGENTS.md"] and "steers the agents" in headless.text()


def test_the_global_config_folder_is_never_written_by_a_restore(stage):
    """With HOME as the project, the global config folder lies inside it; a restore there is refused."""
    failed = restore_module.write_files(stage.home, {".config/opencode_nb/opencode.yaml": ("100644", LOOSE.encode()),
                                                     "fine.txt": ("100644", b"fine\n")},
                                        protected=lambda p: stage.config_dir in (p, *p.parents))
    assert [path for path, _ in failed] == [".config/opencode_nb/opencode.yaml"]
    assert not (stage.config_dir / "opencode.yaml").exists() and (stage.home / "fine.txt").read_text() == "fine\n"


# ---------------------------------------------------------------------------------------------- unrecorded


@pytest.mark.parametrize("ignore_file", [".gitignore", ".git/info/exclude"])
@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"])
async def test_a_turn_that_hides_its_files_from_checkpoints_is_still_undone(
        bwrap, stage, monkeypatch, ignore_file, weakened):
    if weakened:
        monkeypatch.setattr(store_module.SnapshotStore, "_frozen_rules", lambda self, fresh: None)
    subprocess.run(["git", "init", "-q"], cwd=stage.root, check=True)
    (stage.root / ".gitignore").write_text("*.log\n")
    (stage.root / "keep.log").write_text("ignored all along\n")
    before = stage.project()
    ws = stage.open([bash(f"printf '*\\n' >> {ignore_file} && echo evil > planted.py && mkdir -p pkg && "
                          "echo evil > pkg/mod.py && echo changed > notes.txt"), {"text": "ok"},
                     bash("echo more > second.py"), {"text": "ok"}],
                    {"permission": {"*": "allow", "git_internals": "allow"}})
    session = ws.sessions.create()
    await turn(ws, session.id, "one")
    await turn(ws, session.id, "two")
    shell_ran_in_bwrap(ws, session.id)
    assert (stage.root / "planted.py").exists() and "*" in (stage.root / ignore_file).read_text()
    await ws.undo(session.id, to=1)
    if weakened:
        assert (stage.root / "planted.py").exists()
        return
    after = stage.project()
    if ignore_file == ".git/info/exclude":  # the person's `.git` is never rewritten by an undo
        after.pop(".git/info/exclude")
        before.pop(".git/info", None)
        after.pop(".git/info", None)
    assert {k: v for k, v in after.items() if not k.startswith(".git")} == \
        {k: v for k, v in before.items() if not k.startswith(".git")}


async def test_a_file_grown_past_the_size_cap_is_put_back_or_named(bwrap, stage):
    (stage.root / "data.csv").write_text("a,b\n1,2\n")
    ws = stage.open([bash("head -c 2000000 /dev/zero >> data.csv"), {"text": "ok"}],
                    {"checkpoints": {"max_file_mb": 1}})
    session = ws.sessions.create()
    await turn(ws, session.id)
    assert (stage.root / "data.csv").stat().st_size > 2**20
    headless = await ws.undo(session.id)
    assert (stage.root / "data.csv").stat().st_size > 2**20  # nobody to ask: kept, and said
    assert any(c.path == "data.csv" for c in headless.kept), headless.text()
    assert "data.csv" in headless.text()
    await ws.redo(session.id)

    async def yes(conflict: Any) -> bool:
        return True

    report = await ws.undo(session.id, confirm=yes)
    assert (stage.root / "data.csv").read_text() == "a,b\n1,2\n", report.text()


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"])
async def test_a_big_file_a_file_tool_rewrites_is_kept_aside_and_put_back(bwrap, stage, monkeypatch, weakened):
    from opencode_nb.checkpoint import aside

    if weakened:
        monkeypatch.setattr(aside.Aside, "keep", lambda self, turn, tool, args: None)
    big = b"row,value\n" + b"1,2\n" * (300 * 1024)
    (stage.root / "big.csv").write_bytes(big)
    ws = stage.open([write("big.csv", "gone\n"), {"text": "ok"}], {"checkpoints": {"max_file_mb": 1}})
    session = ws.sessions.create()
    await turn(ws, session.id)
    assert (stage.root / "big.csv").read_text() == "gone\n"
    report = await ws.undo(session.id)
    if weakened:
        assert (stage.root / "big.csv").read_text() == "gone\n" and "big.csv" in report.text()
        return
    assert (stage.root / "big.csv").read_bytes() == big, report.text()
    assert report.restored == ["big.csv"] and report.not_undone == []


async def test_a_big_file_kept_aside_and_changed_since_is_asked_about(stage):
    big = b"x" * (2 * 2**20)
    (stage.root / "big.bin").write_bytes(big)
    ws = stage.open([write("big.bin", "agent\n"), {"text": "ok"}],
                    {"checkpoints": {"max_file_mb": 1}, "sandbox": "off"})
    session = ws.sessions.create()
    await turn(ws, session.id)
    (stage.root / "big.bin").write_text("the person's\n")
    report = await ws.undo(session.id)
    assert (stage.root / "big.bin").read_text() == "the person's\n"
    assert [c.path for c in report.kept] == ["big.bin"], report.text()


async def test_a_big_file_the_turn_changed_is_named_as_not_taken_back(bwrap, stage):
    (stage.root / "big.bin").write_bytes(b"\1" * (2 * 2**20))
    ws = stage.open([bash("printf x >> big.bin && echo y > small.txt"), {"text": "ok"}],
                    {"checkpoints": {"max_file_mb": 1}})
    session = ws.sessions.create()
    await turn(ws, session.id)
    report = await ws.undo(session.id)
    assert report.removed == ["small.txt"]
    assert "big.bin (over the size cap" in report.text(), report.text()


# ---------------------------------------------------------------------------------------------- the person


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"])
async def test_a_file_the_person_saved_between_the_agents_steps_is_never_undone_unasked(
        stage, monkeypatch, weakened):
    """The person saves `mine.txt` and edits `notes.txt` while the turn runs, between two of its tool calls
    (here: while the model "thinks"); the agent's own files go, the person's stay."""
    from opencode_nb.checkpoint import service

    if weakened:
        monkeypatch.setattr(service.Checkpoints, "_between", lambda self, session_id: _nothing())

    script = [write("agent.txt", "a\n"), write("agent2.txt", "b\n"), {"text": "ok"}]

    def respond(request: Any) -> dict[str, Any]:
        if len(script) == 2:  # after the first tool call, before the second: the person saves two files
            (stage.root / "mine.txt").write_text("the person's\n")
            (stage.root / "notes.txt").write_text("the person's notes\n")
        return script.pop(0)

    ws = stage.open([], {"sandbox": "off"})
    ws.providers.register("scripted", Scripted(respond=respond))
    session = ws.sessions.create()
    await turn(ws, session.id)
    report = await ws.undo(session.id)
    if weakened:
        assert not (stage.root / "mine.txt").exists()
        return
    assert (stage.root / "mine.txt").read_text() == "the person's\n", report.text()
    assert (stage.root / "notes.txt").read_text() == "the person's notes\n"
    assert not (stage.root / "agent.txt").exists() and not (stage.root / "agent2.txt").exists()
    assert {c.path for c in report.kept} == {"mine.txt", "notes.txt"}


async def _nothing() -> None:
    return None


def _is_fifo(path: Path) -> bool:
    return stat.S_ISFIFO(os.lstat(path).st_mode)
