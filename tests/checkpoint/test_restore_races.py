"""Undo against a tree that changes under it: a link planted after the undo looked at the tree (its plan)
and before it writes (a command that outlived its turn, say), at a depth below the first folder."""

from __future__ import annotations

import subprocess

import pytest

from opencode_nb.checkpoint import restore as restore_module
from opencode_nb.checkpoint import store as store_module

from .test_restore_attacks import LOOSE, bash, follow_paths, stage, turn, write  # noqa: F401


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"])
async def test_a_link_planted_between_the_plan_and_the_write_is_not_followed(stage, monkeypatch, weakened):  # noqa: F811
    ws = stage.open([write("a/b/c/opencode.yaml", LOOSE), {"text": "ok"}, bash("rm -r a/b/c"), {"text": "ok"}],
                    {"sandbox": "off"})
    session = ws.sessions.create()
    await turn(ws, session.id, "one")
    await turn(ws, session.id, "two")
    writer = follow_paths if weakened else restore_module.write_files

    def racing(root, files, **kw):  # the plan saw a/b/ as a folder; now its child is a link to the config folder
        (stage.root / "a" / "b" / "c").symlink_to(stage.config_dir)
        return writer(root, files, **kw)

    monkeypatch.setattr(restore_module, "write_files", racing)
    outside = stage.outside()
    report = await ws.undo(session.id)
    if weakened:
        assert (stage.config_dir / "opencode.yaml").read_text() == LOOSE
        return
    assert stage.outside() == outside, report.text()
    assert [p for p, _ in report.failed] == ["a/b/c/opencode.yaml"], report.text()
    assert "link" in report.text()


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"])
async def test_a_file_under_a_name_git_refuses_to_record_is_still_undone(stage, monkeypatch, weakened):  # noqa: F811
    """`GIT~1` is the short name Windows file systems give `.git`, so git on every platform refuses to record
    a path through it ("Ignoring path", exit 0): a turn's file there would outlive its undo, unnamed. On a
    file system without short names it is a folder like any other, and is recorded so."""
    if weakened:
        monkeypatch.setattr(store_module, "POSIX_CONFIG", {})
    ws = stage.open([bash("mkdir -p GIT~1 && echo evil > GIT~1/run.py && echo y > plain.txt"), {"text": "ok"}],
                    {"sandbox": "off"})
    session = ws.sessions.create()
    await turn(ws, session.id, "one")
    report = await ws.undo(session.id)
    if weakened:
        assert (stage.root / "GIT~1" / "run.py").exists()
        return
    assert not (stage.root / "GIT~1").exists() and not (stage.root / "plain.txt").exists(), report.text()
    assert ws.checkpoints.available


async def test_a_path_git_still_refuses_is_named_as_not_recorded(stage, monkeypatch):  # noqa: F811
    """Whatever name git declines to record, the undo says so rather than leave the file in silence."""
    monkeypatch.setattr(store_module, "POSIX_CONFIG", {})  # git's own refusal of `GIT~1`, as on other systems
    ws = stage.open([bash("mkdir -p GIT~1 && echo evil > GIT~1/run.py"), {"text": "ok"}], {"sandbox": "off"})
    session = ws.sessions.create()
    await turn(ws, session.id, "one")
    report = await ws.undo(session.id)
    assert "GIT~1/run.py" in report.not_undone and "GIT~1/run.py" in report.text(), report.text()


@pytest.mark.parametrize("weakened", [False, True], ids=["guarded", "weakened"])
async def test_a_repository_a_turn_made_to_hide_its_files_is_offered_for_removal(stage, monkeypatch, weakened):  # noqa: F811
    """A repository inside the project is never recorded (its own git keeps its files), so a turn that runs
    `git init evil` and writes there hides those files from its undo. One that was not there when the turn
    began is the turn's: the undo asks to delete it whole (headless: kept, and named)."""
    from opencode_nb.checkpoint import aside

    if weakened:
        monkeypatch.setattr(aside.Aside, "repos_at_start", lambda self, turn: None)
    (stage.root / "mine").mkdir()
    subprocess.run(["git", "init", "-q", str(stage.root / "mine")], check=True)  # the person's, before
    (stage.root / "mine" / "work.py").write_text("the person's\n")
    ws = stage.open([bash("git init -q evil && echo x > evil/payload.py && echo y > mine/more.py"),
                     {"text": "ok"}], {"sandbox": "off"})
    session = ws.sessions.create()
    await turn(ws, session.id, "one")
    headless = await ws.undo(session.id)
    assert (stage.root / "evil" / "payload.py").exists() and "evil/" in headless.text(), headless.text()
    await ws.redo(session.id)

    async def yes(conflict):
        return True

    report = await ws.undo(session.id, confirm=yes)
    assert (stage.root / "mine" / "work.py").read_text() == "the person's\n"  # a repository of before: never
    if weakened:
        assert (stage.root / "evil" / "payload.py").exists()
        return
    assert not (stage.root / "evil").exists(), report.text()
    assert "evil/" in report.removed and "evil/" not in report.not_undone
