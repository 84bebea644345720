"""Checkpoints work in any folder, never touch the person's own git, and skip what is ignored or too big."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time

from .conftest import bash, digest, open_workspace, write


def git(root, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "p", "GIT_AUTHOR_EMAIL": "p@x", "GIT_COMMITTER_NAME": "p",
           "GIT_COMMITTER_EMAIL": "p@x", "GIT_CONFIG_GLOBAL": os.devnull}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


async def test_in_a_git_repository_the_persons_index_and_refs_stay_as_they_were(project, tmp_path):
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "start")
    (project / "src" / "stats.py").write_text("staged change\n")
    git(project, "add", "src/stats.py")  # the person's index differs from HEAD: it must stay so
    index, head = (project / ".git" / "index").read_bytes(), git(project, "rev-parse", "HEAD")
    refs, status = git(project, "for-each-ref"), git(project, "status", "--porcelain")
    before = digest(project)

    ws, _ = open_workspace(project, tmp_path / "data", [
        bash("sed -i 's/staged/agent/' src/stats.py && echo new > made.txt"), write("README.md", "agent\n"),
        {"text": "done"}])
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    assert (project / "made.txt").exists()
    assert (project / ".git" / "index").read_bytes() == index

    report = await ws.undo(session.id)
    assert report.kept == [] and digest(project) == before
    assert (project / ".git" / "index").read_bytes() == index
    assert git(project, "rev-parse", "HEAD") == head and git(project, "for-each-ref") == refs
    assert git(project, "status", "--porcelain") == status
    assert not (project / ".git" / "checkpoints").exists()
    ws.close()


async def test_ignored_data_costs_nothing_and_files_over_the_cap_are_skipped_and_named(project, tmp_path):
    (project / ".gitignore").write_text("big/\n")
    (project / "big").mkdir()
    with open(project / "big" / "huge.dat", "wb") as f:  # 1 GB, sparse: nothing to read, all to hash if not ignored
        f.truncate(2**30)
    (project / "node_modules" / "pkg").mkdir(parents=True)
    (project / "node_modules" / "pkg" / "index.js").write_text("x\n")
    (project / "env").mkdir()
    (project / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (project / "env" / "lib.py").write_text("x\n")
    (project / "tools" / "py311").mkdir(parents=True)
    (project / "tools" / "py311" / "pyvenv.cfg").write_text("home = /usr\n")
    (project / "tools" / "py311" / "site.py").write_text("x\n")
    (project / "tools" / "run.py").write_text("x\n")
    ws, _ = open_workspace(project, tmp_path / "data", [
        bash("head -c 3000 /dev/zero > large.bin && echo small > small.txt"), {"text": "done"}],
        {"checkpoints": {"max_file_mb": 0.001}})
    session = ws.sessions.create()
    started = time.perf_counter()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    assert time.perf_counter() - started < 10

    [turn] = ws.checkpoints.turns(session.id)
    assert [f.path for f in turn.files] == ["small.txt"]
    assert turn.skipped == ["large.bin"]
    store_size = sum(p.stat().st_size for p in ws.checkpoints.git_dir.rglob("*") if p.is_file())
    assert store_size < 5 * 2**20
    listed = subprocess.run(["git", "ls-files"], env={**os.environ, "GIT_DIR": str(ws.checkpoints.git_dir),
                            "GIT_WORK_TREE": str(project)}, cwd=project, capture_output=True, text=True).stdout
    assert "big/huge.dat" not in listed and "node_modules" not in listed and "env/" not in listed
    assert "tools/py311" not in listed and "tools/run.py" in listed and "src/stats.py" in listed

    report = await ws.undo(session.id)
    assert report.removed == ["small.txt"]
    assert (project / "large.bin").exists()  # never recorded, so never touched
    ws.close()


async def test_a_turn_that_only_reads_records_no_checkpoint(project, tmp_path):
    turns = [{"tool_calls": [{"name": "read", "input": {"path": "README.md"}}]}, {"text": "read it"}]
    ws, _ = open_workspace(project, tmp_path / "data", turns)
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "look"), 30)
    [turn] = ws.checkpoints.turns(session.id)
    assert turn.files == [] and ws.store.checkpoint_turns(session.id) == []
    ws.close()


async def test_a_data_dir_inside_the_project_is_never_recorded(project, tmp_path):
    ws, _ = open_workspace(project, project / ".ocdata", [write("a.txt", "x\n"), {"text": "ok"}])
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 30)
    listed = subprocess.run(["git", "ls-files"], env={**os.environ, "GIT_DIR": str(ws.checkpoints.git_dir),
                            "GIT_WORK_TREE": str(project)}, cwd=project, capture_output=True, text=True).stdout
    assert "a.txt" in listed and ".ocdata" not in listed
    assert [f.path for f in ws.checkpoints.turns(session.id)[0].files] == ["a.txt"]
    ws.close()


async def test_a_recorded_file_that_grows_over_the_cap_is_left_alone(project, tmp_path):
    ws, _ = open_workspace(project, tmp_path / "data", [
        write("data.csv", "a,b\n"), {"text": "one"}, bash("head -c 3000 /dev/zero > data.csv && echo y > y.txt"),
        {"text": "two"}], {"checkpoints": {"max_file_mb": 0.001}})
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "small"), 30)
    await asyncio.wait_for(ws.prompt(session.id, "grow"), 30)
    second = ws.checkpoints.turns(session.id)[1]
    assert second.skipped == ["data.csv"] and [f.path for f in second.files] == ["y.txt"]
    report = await ws.undo(session.id)
    assert report.removed == ["y.txt"] and report.restored == []
    assert (project / "data.csv").stat().st_size == 3000
    ws.close()
