"""`opencode-nb checkpoints|diff|undo|redo [SESSION]`: a session's turns taken back from a terminal."""

from __future__ import annotations

import os
import subprocess
import sys

from opencode_nb import Workspace
from opencode_nb.provider import Scripted


def run(*args, cwd, env):
    return subprocess.run([sys.executable, "-m", "opencode_nb.cli", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)


async def test_a_session_can_be_listed_diffed_undone_and_redone_from_the_terminal(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "OPENCODE_NB_DATA_DIR": str(tmp_path / "d")}
    ws = Workspace(project, {"model": "scripted/x", "permission": {"*": "allow"}}, data_dir=tmp_path / "d", env=env)
    ws.providers.register("scripted", Scripted([
        {"tool_calls": [{"name": "write", "input": {"path": "a.txt", "content": "two\n"}}]}, {"text": "done"},
        {"tool_calls": [{"name": "write", "input": {"path": "b.txt", "content": "new\n"}}]}, {"text": "done"}]))
    session = ws.sessions.create()
    await ws.prompt(session.id, "change a")
    await ws.prompt(session.id, "make b")
    await ws.aclose()

    listed = run("checkpoints", cwd=project, env=env)
    assert listed.returncode == 0, listed.stderr
    first, second = listed.stdout.splitlines()
    assert first.split()[0] == "1" and "'change a'" in first and "a.txt (+1 -1)" in first
    assert "'make b'" in second and "b.txt (new)" in second

    diff = run("diff", session.id, "1", cwd=project, env=env)
    assert "-one" in diff.stdout and "+two" in diff.stdout

    undone = run("undo", "--to", "1", cwd=project, env=env)
    assert undone.returncode == 0, undone.stderr
    assert undone.stdout.startswith("Took back turns 1-2: restored a.txt; removed b.txt")
    assert (project / "a.txt").read_text() == "one\n" and not (project / "b.txt").exists()
    assert "(undone)" in run("checkpoints", cwd=project, env=env).stdout

    (project / "a.txt").write_text("mine\n")  # changed after the undo: redo asks, and piped it keeps the file
    redone = run("redo", session.id, cwd=project, env=env)
    assert redone.returncode == 1 and "Kept a.txt" in redone.stdout
    assert (project / "a.txt").read_text() == "mine\n" and (project / "b.txt").read_text() == "new\n"

    missing = run("diff", session.id, "9", cwd=project, env=env)
    assert missing.returncode == 2 and "there is no turn 9" in missing.stderr
