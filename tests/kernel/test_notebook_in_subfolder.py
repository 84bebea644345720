"""A notebook in a subfolder of a git repository, with its own opencode.yaml: the kernel, the agent's tools and
the card all work in the notebook's folder, while the repository stays the project."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml

from .frontend import FakeFrontend

pytestmark = pytest.mark.timeout(90)

SCRIPT = [
    {"tool_calls": [{"name": "write", "input": {"path": "notes.md", "content": "# findings\n"}}]},
    {"tool_calls": [{"name": "bash", "input": {"command": "pwd > where.txt", "description": "Say where"}}]},
    {"tool_calls": [{"name": "read", "input": {"path": "../src/stats.py"}}]},
    {"text": "Wrote notes.md."},
]


@pytest.fixture
def notebook_in_play(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "src" / "stats.py").write_text("def mean(values):\n    return sum(values) / len(values)\n")
    play = repo / "play"
    play.mkdir()
    (play / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/test", "permission": {"*": "allow"}, "provider": {"scripted": {"script": SCRIPT}}}))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OPENCODE_NB_") and k not in ("JPY_SESSION_NAME", "CI")}
    env.update({"OPENCODE_NB_DATA_DIR": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
                "OPENCODE_NB_HEADLESS": "1"})
    frontend = FakeFrontend(str(play), env, render_views=False)
    assert frontend.run("%load_ext opencode_nb")["content"]["status"] == "ok"
    yield frontend, repo, play
    frontend.close()


def test_a_notebook_s_agent_writes_and_runs_commands_in_the_notebook_s_folder(notebook_in_play):
    fe, repo, play = notebook_in_play
    msg = fe.execute("%%agent\nwrite down what you found")
    assert fe.done(msg, timeout=60)["content"]["status"] == "ok"
    assert (play / "notes.md").read_text() == "# findings\n"
    assert not (repo / "notes.md").exists()
    assert (play / "where.txt").read_text().strip() == os.path.realpath(play)
    shown = fe.text(msg)
    assert "notes.md" in shown and "play/notes.md" not in shown  # the card names it from the notebook
    assert "../src/stats.py" in shown
    # the person's own code, the agent's workspace and the repository agree
    check = fe.run_id("import os, opencode_nb.kernel as k; ws = k.current().workspace(); "
                      "print(os.getcwd(), ws.directory, ws.root, sep='|')")
    cwd, directory, root = fe.text(check).strip().split("|")
    assert os.path.realpath(cwd) == os.path.realpath(directory) == os.path.realpath(play)
    assert os.path.realpath(root) == os.path.realpath(repo)
