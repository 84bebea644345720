"""When files cannot be undone, undo says why and still takes back the history; checkpoints never fail a turn."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from opencode_nb.config import ConfigError

from .conftest import bash, open_workspace, write


async def one_turn(ws, text="go"):
    session = ws.sessions.create()
    result = await asyncio.wait_for(ws.prompt(session.id, text), 30)
    assert result.error is None
    return session


async def test_a_corrupt_store_changes_no_file_and_says_so(project, tmp_path):
    ws, _ = open_workspace(project, tmp_path / "data", [write("src/stats.py", "agent\n"), {"text": "ok"}])
    session = await one_turn(ws)
    for obj in (ws.checkpoints.git_dir / "objects").rglob("*"):
        if obj.is_file() and len(obj.parent.name) == 2:
            obj.chmod(0o644)
            obj.write_bytes(b"garbage")
    report = await ws.undo(session.id)
    assert report.unavailable is not None and "damaged" in report.unavailable
    assert report.restored == [] and (project / "src" / "stats.py").read_text() == "agent\n"
    assert "Files were not undone: the checkpoint store" in report.text()
    assert ws.sessions.messages(session.id) == []  # the history was still taken back
    ws.close()


async def test_a_missing_store_changes_no_file_and_says_so(project, tmp_path):
    ws, _ = open_workspace(project, tmp_path / "data", [bash("echo x > made.txt"), {"text": "ok"}])
    session = await one_turn(ws)
    shutil.rmtree(ws.checkpoints.git_dir)
    report = await ws.undo(session.id)
    assert report.unavailable is not None and "missing" in report.unavailable
    assert (project / "made.txt").exists()
    ws.close()


async def test_without_git_checkpoints_are_off_with_a_notice_and_undo_still_takes_back_the_history(
        project, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    ws, _ = open_workspace(project, tmp_path / "data", [write("a.txt", "x\n"), {"text": "ok"}])
    assert not ws.checkpoints.available and "`git` was not found" in ws.checkpoints.why_not
    assert any("`git` was not found" in w for w in ws.warnings)
    session = await one_turn(ws)
    assert (project / "a.txt").exists()
    report = await ws.undo(session.id)
    assert report.turns and report.restored == [] and (project / "a.txt").exists()
    assert "`git` was not found" in report.unavailable and "Files were not undone" in report.text()
    assert ws.sessions.messages(session.id) == []
    ws.close()


async def test_switched_off_in_the_config_nothing_is_recorded(project, tmp_path):
    ws, _ = open_workspace(project, tmp_path / "data", [write("a.txt", "x\n"), {"text": "ok"}],
                           {"checkpoints": False})
    assert not ws.checkpoints.available and ws.warnings == []
    session = await one_turn(ws)
    assert ws.store.checkpoint_turns(session.id) == [] and not ws.checkpoints.git_dir.exists()
    ws.close()


def test_the_config_keys_are_validated_with_a_clear_message(project, tmp_path):
    with pytest.raises(ConfigError, match="max_file_mb"):
        open_workspace(project, tmp_path / "data", [], {"checkpoints": {"max_file_mb": 0}})
    with pytest.raises(ConfigError, match="keep_turns"):
        open_workspace(project, tmp_path / "data", [], {"checkpoints": {"keep_turns": 0}})


async def test_the_oldest_checkpoints_are_pruned_first_and_their_trees_deleted(project, tmp_path):
    turns = [write("a.txt", f"{n}\n") if i == 0 else {"text": "ok"} for n in range(4) for i in range(2)]
    ws, _ = open_workspace(project, tmp_path / "data", turns, {"checkpoints": {"keep_turns": 1}})
    session = ws.sessions.create()
    first_tree = None
    for n in range(3):
        await asyncio.wait_for(ws.prompt(session.id, f"turn {n}"), 30)
        if n == 0:
            first_tree = ws.store.checkpoint_turns(session.id)[0].after_tree
    rows = ws.store.checkpoint_turns(session.id)
    assert [r.pruned for r in rows] == [True, True, False]
    check = subprocess.run(["git", "cat-file", "-e", first_tree], env={"GIT_DIR": str(ws.checkpoints.git_dir)},
                           capture_output=True)
    assert check.returncode != 0  # gone from disk, not only forgotten
    report = await ws.undo(session.id)
    assert report.unavailable is None and (project / "a.txt").read_text() == "1\n"
    report = await ws.undo(session.id, to=1)
    assert "pruned" in (report.unavailable or "")
    ws.close()


SCRIPT = textwrap.dedent("""
    import asyncio, json, sys
    sys.path[:0] = {paths!r}
    from tests.checkpoint.conftest import open_workspace, write

    async def main():
        ws, _ = open_workspace(__import__("pathlib").Path({root!r}), __import__("pathlib").Path({data!r}),
                               [write("x.txt", "x"), {{"text": "ok"}}])
        session = ws.sessions.create()
        result = await ws.prompt(session.id, "go")
        print(json.dumps({{"available": ws.checkpoints.available, "why": ws.checkpoints.why_not,
                          "warnings": ws.warnings, "error": str(result.error) if result.error else None}}))
        ws.close()

    asyncio.run(main())
""")


def in_namespace(mounts: str, root: Path, data: Path) -> dict:
    """Run one turn in a private mount namespace where `mounts` made something read-only."""
    script = SCRIPT.format(paths=[str(Path.cwd()), *sys.path], root=str(root), data=str(data))
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", f'{mounts} && exec "$0" -c "$1"', sys.executable, script],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


needs_namespaces = pytest.mark.skipif(
    shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode,
    reason="needs unprivileged mount namespaces (unshare -rm)")


@needs_namespaces
def test_a_read_only_project_turns_checkpoints_off_with_a_notice(project, tmp_path):
    ro = f"mount --bind {project} {project} && mount -o remount,ro,bind {project}"
    out = in_namespace(ro, project, tmp_path / "data")
    assert out["available"] is False and "read-only" in out["why"]
    assert any("read-only" in w for w in out["warnings"])


@needs_namespaces
def test_a_store_that_cannot_be_written_turns_checkpoints_off_and_the_turn_still_runs(project, tmp_path):
    store = tmp_path / "data" / "checkpoints"
    store.mkdir(parents=True)
    ro = f"mount --bind {store} {store} && mount -o remount,ro,bind {store}"
    out = in_namespace(ro, project, tmp_path / "data")
    assert out["error"] is None and (project / "x.txt").exists()
    assert out["available"] is False and "could not be written" in out["why"]
