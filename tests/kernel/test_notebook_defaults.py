"""In a notebook of one's own (an `opencode.yaml` that says nothing about permissions), shell commands that
change something and file edits ask first, as the quickstart shows; one line of configuration gives OpenCode's
defaults back. Driven through a real kernel, answering the asks as a person in JupyterLab would.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .frontend import FakeFrontend

pytestmark = pytest.mark.timeout(120)

RESTORE = {"edit": "allow", "bash": "allow"}
"""The one line of `opencode.yaml` the notebook defaults tell a person about."""


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "input": {"command": command, "description": command}}]}


def write(path: str, content: str = "x\n") -> dict[str, Any]:
    return {"tool_calls": [{"name": "write", "input": {"path": path, "content": content}}]}


@pytest.fixture
def notebook(tmp_path: Path) -> Iterator[Callable[..., tuple[FakeFrontend, Path]]]:
    """A kernel in a fresh repository whose `opencode.yaml` names only the model (and `permission`, if given)."""
    started: list[FakeFrontend] = []

    def start(script: list[dict[str, Any]], permission: dict[str, Any] | None = None) -> tuple[FakeFrontend, Path]:
        project = tmp_path / "project"
        project.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        config: dict[str, Any] = {"model": "scripted/test", "provider": {"scripted": {"script": script}}}
        if permission is not None:
            config["permission"] = permission
        (project / "opencode.yaml").write_text(yaml.safe_dump(config))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("OPENCODE_NB_") and k not in ("JPY_SESSION_NAME", "CI")}
        env.update({"OPENCODE_NB_DATA_DIR": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")})
        frontend = FakeFrontend(str(project), env)
        started.append(frontend)
        return frontend, project

    yield start
    for frontend in started:
        frontend.close()


def answer(fe: FakeFrontend, code: str, button: str) -> str:
    """Run `code`, click `button` on the ask it raises, and return the cell's text once it is done."""
    msg = fe.execute(code)
    fe.click(fe.wait_button(button, timeout=60))
    fe.done(msg, timeout=60)
    return fe.text(msg)


def test_a_shell_redirect_and_a_write_ask_first_and_rejected_leave_no_file(notebook):
    fe, project = notebook([bash("echo x > made_by_shell.txt"), write("made_by_write.txt")])  # a reject ends the run
    fe.run("%load_ext opencode_nb")
    shell_cell = answer(fe, "%%agent\nput x in a file", "Reject")
    assert "build asked for bash" in shell_cell and "rejected" in shell_cell
    assert not (project / "made_by_shell.txt").exists()
    write_cell = answer(fe, "%%agent\nwrite it with the write tool", "Reject")
    assert "build asked for edit" in write_cell and "rejected" in write_cell
    assert not (project / "made_by_write.txt").exists()


def test_always_allow_makes_the_next_calls_of_the_same_kind_run_without_asking(notebook):
    fe, project = notebook([bash("echo a > a.txt"), bash("echo b > b.txt"), write("c.txt"), write("d.txt"),
                            {"text": "All four written."}])
    fe.run("%load_ext opencode_nb")
    msg = fe.execute("%%agent\nwrite four files")
    fe.click(fe.wait_button("Always allow", timeout=60))  # echo *
    fe.wait_for(lambda: len(fe.buttons("Always allow")) == 2, what="the write's ask")
    fe.click(fe.wait_button("Always allow"))  # every edit by build
    fe.done(msg, timeout=60)
    text = fe.text(msg)
    assert "All four written." in text
    assert len(fe.buttons("Always allow")) == 2, "the second echo and the second write did not ask"
    assert all((project / name).exists() for name in ("a.txt", "b.txt", "c.txt", "d.txt"))


def test_read_only_commands_run_without_asking(notebook):
    fe, _ = notebook([bash("ls"), bash("git status --short"), {"text": "Looked."}])
    fe.run("%load_ext opencode_nb")
    msg = fe.run_id("%%agent\nlook around", timeout=60)
    assert "Looked." in fe.text(msg)
    assert fe.buttons("Allow once") == [], "ls and git status change nothing: no ask"


def test_the_one_config_line_gives_back_opencodes_defaults(notebook):
    fe, project = notebook([bash("echo x > made_by_shell.txt"), write("made_by_write.txt"), {"text": "Both done."}],
                           permission=RESTORE)
    fe.run("%load_ext opencode_nb")
    msg = fe.run_id("%%agent\nmake both files", timeout=60)
    text = fe.text(msg)
    assert "Both done." in text and "Notebook defaults" not in text
    assert fe.buttons("Allow once") == []
    assert (project / "made_by_shell.txt").exists() and (project / "made_by_write.txt").exists()


def test_the_first_agent_cell_of_a_kernel_says_once_which_defaults_are_in_force(notebook):
    fe, _ = notebook([{"text": "Hello."}, {"text": "Again."}])
    fe.run("%load_ext opencode_nb")
    mistyped = fe.execute("%agent sesions")
    assert fe.done(mistyped)["content"]["status"] == "error"
    assert "Notebook defaults" not in fe.text(mistyped), "a line refused as mistyped ran nothing to say them for"
    first = fe.text(fe.run_id("%%agent\nhello", timeout=60))
    [line] = [line for line in first.splitlines() if "Notebook defaults" in line]
    assert "ask first" in line and "permission: {edit: allow, bash: allow}" in line and "opencode.yaml" in line
    second = fe.text(fe.run_id("%%agent\nagain", timeout=60))
    assert "Again." in second and "Notebook defaults" not in second, "said once per kernel"
    assert "Notebook defaults" not in fe.text(fe.run_id("%agent sessions"))


def test_permissions_name_the_notebook_defaults_as_where_the_asks_come_from(notebook):
    fe, _ = notebook([])
    fe.run("%load_ext opencode_nb")
    text = fe.text(fe.run_id("%agent permissions"))
    decided = text.split("\n\n")[0]
    rows = {line.split()[0]: line for line in decided.splitlines()[2:] if line.strip()}
    assert rows["edit"].split()[1] == "ask" and "notebook default" in rows["edit"]
    assert rows["bash"].split()[1] == "ask" and "notebook default" in rows["bash"]
    assert "ls → allow" in rows["bash"]
    behind = [line for line in text.splitlines() if " bash " in line or " edit " in line]
    assert any("notebook default" in line for line in behind), "the rules table says where each came from"


def test_load_ext_prints_one_line_with_the_version_the_model_and_where_to_start(notebook):
    from opencode_nb.version import __version__

    fe, _ = notebook([])
    msg = fe.run_id("%load_ext opencode_nb")
    [line] = [line for line in fe.text(msg).splitlines() if line.strip()]
    assert line.startswith(f"opencode_nb {__version__}")
    assert "scripted/test" in line and "opencode.yaml" in line, "the model in use and what chose it"
    assert "%%agent" in line and "%agent help" in line
    again = fe.run_id("%load_ext opencode_nb")
    assert f"opencode_nb {__version__} ·" not in fe.text(again), "loading twice says it once (IPython says the rest)"
