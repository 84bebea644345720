"""Reads kept to what the `external_directory` rules allow, checked by effect through real bubblewrap.

A secret lives outside the project twice: in a folder beside it and in a fake `$HOME` (the project itself
lives under that home, as most do). The project holds a link out to each. With `external_directory` denied,
programs that find paths the rules never see (`grep -R`, `find -L`, a script opening an absolute path) must
not print the secret; with `sandbox: off` they do, which is what makes the attacks real. Writes through a
hard link to an outside file ask `external_directory`, from the file tools and from bash alike; so do the file
tools' reads of one (`read`, `grep` given it), and `grep` over a folder leaves it out and names it. Under
`external_directory: deny` none of these reach the outside file whatever the person approves; with the link
check weakened the secret is read, which is what makes those attacks real.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from opencode_nb import Workspace
from opencode_nb.provider import Scripted

SECRET = "TOPSECRET-41c9"
DENY_OUTSIDE = {"*": "allow", "external_directory": "deny"}


class Stage:
    """`base/home` is `$HOME`, with `home/.secret` and the project `home/proj`; `base/outside/secret.txt`."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home"
        self.root = self.home / "proj"
        self.outside = base / "outside"
        (self.root / ".git").mkdir(parents=True)
        self.outside.mkdir()
        (self.home / ".secret").write_text(f"{SECRET} home\n")
        self.secret = self.outside / "secret.txt"
        self.secret.write_text(f"{SECRET} outside\n")
        (self.root / "inside.txt").write_text("inside\n")
        (self.root / "out").symlink_to(self.outside)
        (self.root / "dotfile").symlink_to(self.home / ".secret")
        self.asks: list[Any] = []
        self.workspaces: list[Workspace] = []

    def workspace(self, permission: dict[str, Any], sandbox: str, answer: str = "reject") -> Workspace:
        def on_ask(request: Any) -> str:
            self.asks.append(request)
            return answer

        ws = Workspace(self.root, {"model": "scripted/demo", "sandbox": sandbox, "permission": permission},
                       data_dir=self.base / "data", on_ask=on_ask,
                       env={"XDG_CONFIG_HOME": str(self.base / "xdg"), "HOME": str(self.home)})
        self.workspaces.append(ws)
        return ws


@pytest.fixture
def stage(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stage]:
    base = Path(tempfile.mkdtemp(prefix="opencode-nb-reads-", dir="/var/tmp"))
    made = Stage(base)
    monkeypatch.setenv("HOME", str(made.home))  # the commands' $HOME
    yield made
    for ws in made.workspaces:
        ws.close()
    shutil.rmtree(base, ignore_errors=True)


async def call(ws: Workspace, tool: str, params: dict[str, Any]) -> Any:
    ws.providers.register("scripted", Scripted([{"tool_calls": [{"name": tool, "input": params}]},
                                                {"text": "done"}]))
    session = ws.sessions.create().id
    await asyncio.wait_for(ws.prompt(session, "go"), 60)
    return [p.state for m in ws.sessions.messages(session) for p in m.parts if p.type == "tool"][-1]


def said(state: Any) -> str:
    return str(getattr(state, "output", None) or getattr(state, "error", None) or "")


READS = {
    "grep -R follows a link out": "grep -R TOPSECRET . ; echo searched",
    "find -L cats through links": "find -L . -type f -exec cat {} + ; echo found",
    "a script opens the outside file": "python3 -c 'print(open(\"{secret}\").read())'",
    "a script opens a file in $HOME": "python3 -c 'import os; print(open(os.path.expanduser(\"~/.secret\")).read())'",
    "a script lists $HOME": "python3 -c 'import os; print(os.listdir(os.path.expanduser(\"~\")))'",
}


@pytest.mark.parametrize("read", list(READS), ids=list(READS))
async def test_with_external_directory_denied_no_outside_file_is_read(bwrap, stage, read):
    ws = stage.workspace(DENY_OUTSIDE, "required")
    state = await call(ws, "bash", {"command": READS[read].replace("{secret}", str(stage.secret))})
    assert state.status == "completed" and state.metadata["sandbox"] == "bwrap", state
    assert SECRET not in said(state) and "'.secret'" not in said(state)


@pytest.mark.parametrize("read", list(READS), ids=list(READS))
async def test_without_the_sandbox_the_same_reads_leak(stage, read):
    """The attacks are real: the rules cannot see these paths, only the sandbox hides them."""
    ws = stage.workspace(DENY_OUTSIDE, "off")
    state = await call(ws, "bash", {"command": READS[read].replace("{secret}", str(stage.secret))})
    assert SECRET in said(state) or "'.secret'" in said(state)


async def test_the_project_under_home_and_the_system_still_work(bwrap, stage):
    ws = stage.workspace(DENY_OUTSIDE, "required")
    state = await call(ws, "bash", {"command": "cat inside.txt && echo new > new.txt && git --version && "
                                               "python3 -c 'import ssl, json; print(\"python ok\")'"})
    assert state.status == "completed" and state.metadata["exit"] == 0, said(state)
    assert "inside" in state.output and "python ok" in state.output and "git version" in state.output
    assert (stage.root / "new.txt").read_text() == "new\n"


async def test_a_folder_the_rules_allow_by_name_stays_readable(bwrap, stage):
    ws = stage.workspace({"*": "allow", "external_directory": {"*": "deny", f"{stage.outside}/*": "allow"}},
                         "required")
    command = READS["a script opens the outside file"].replace("{secret}", str(stage.secret))
    state = await call(ws, "bash", {"command": command + "; " + READS["a script opens a file in $HOME"]})
    assert f"{SECRET} outside" in said(state) and f"{SECRET} home" not in said(state)


@pytest.mark.parametrize("rule", ["ask", "allow"])
async def test_unless_outside_reads_are_denied_a_script_reads_data_no_line_names(bwrap, stage, rule):
    """The default (`ask`) guards what a line names; data a script opens on its own stays readable."""
    ws = stage.workspace({"*": "allow", "external_directory": rule}, "required")
    command = READS["a script opens the outside file"].replace("{secret}", str(stage.secret))
    state = await call(ws, "bash", {"command": command})
    assert state.status == "completed" and f"{SECRET} outside" in said(state), said(state)
    assert stage.asks == []


async def test_when_the_rules_allow_outside_reads_the_whole_file_system_is_readable(bwrap, stage):
    ws = stage.workspace({"*": "allow"}, "required")
    state = await call(ws, "bash", {"command": READS["grep -R follows a link out"]})
    assert f"{SECRET} outside" in said(state)


# ---------------------------------------------------------------------------------------------- hard links


@pytest.fixture
def linked(stage: Stage) -> Path:
    """`proj/hard.txt`: another name of `outside/shared.txt`."""
    shared = stage.outside / "shared.txt"
    shared.write_text("original\n")
    os.link(shared, stage.root / "hard.txt")
    return shared


@pytest.mark.parametrize(("tool", "params"), [
    ("write", {"path": "hard.txt", "content": "changed\n"}),
    ("edit", {"path": "hard.txt", "old_string": "original", "new_string": "changed"}),
])
async def test_the_file_tools_ask_before_writing_through_a_hard_link(stage, linked, tool, params):
    ws = stage.workspace({"*": "allow", "external_directory": {"*": "ask"}}, "off")
    state = await call(ws, tool, params)
    assert state.status == "error"
    assert [(r.permission, r.patterns) for r in stage.asks] == [("external_directory", [str(stage.root / "hard.txt")])]
    assert linked.read_text() == "original\n"


@pytest.mark.parametrize("sandbox", ["required", "off"])
async def test_a_redirection_through_a_hard_link_asks(stage, linked, sandbox, request):
    if sandbox == "required":
        request.getfixturevalue("bwrap")
    ws = stage.workspace(DENY_OUTSIDE, sandbox)
    for command in ["echo changed >> hard.txt", "cat inside.txt > hard.txt", "echo x | tee -a inside.txt >hard.txt"]:
        state = await call(ws, "bash", {"command": command})
        assert state.status == "error" and "rule which prevents" in state.error, (command, state)
    assert linked.read_text() == "original\n"


async def test_a_file_with_one_name_is_written_without_asking(stage):
    ws = stage.workspace({"*": "allow", "external_directory": "ask"}, "off")
    state = await call(ws, "write", {"path": "inside.txt", "content": "changed\n"})
    assert state.status == "completed" and stage.asks == []


# ---------------------------------------------------------------------------------------------- hard links read


@pytest.fixture
def secret_link(stage: Stage) -> Path:
    """`proj/data/linked.txt`: another name of `outside/secret.txt`, made before the session."""
    (stage.root / "data").mkdir()
    link = stage.root / "data" / "linked.txt"
    os.link(stage.secret, link)
    return link


FILE_READS = {
    "read": ("read", {"path": "data/linked.txt"}),
    "grep on the file": ("grep", {"pattern": "TOPSECRET", "path": "data/linked.txt"}),
}
FOLDER_READS = {
    "grep over the project": ("grep", {"pattern": "TOPSECRET"}),
    "grep over the folder": ("grep", {"pattern": "TOPSECRET", "path": "data"}),
    "grep over a pattern that matches nothing there": ("grep", {"pattern": "no such text"}),
}
WRITES = {
    "write": ("write", {"path": "data/linked.txt", "content": "changed\n"}),
    "edit": ("edit", {"path": "data/linked.txt", "old_string": "outside", "new_string": "changed"}),
}


@pytest.fixture(params=["rg", "python"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """grep's two engines: ripgrep where installed, and the pure-Python search."""
    if request.param == "python":
        monkeypatch.setattr("opencode_nb.tool.grep.shutil.which", lambda name: None)
    elif shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed here")
    return request.param


@pytest.mark.parametrize("how", list(FILE_READS), ids=list(FILE_READS))
async def test_with_outside_denied_a_file_read_through_a_hard_link_is_refused_whatever_is_approved(
        bwrap, stage, secret_link, engine, how):
    ws = stage.workspace(DENY_OUTSIDE, "required", answer="always")
    state = await call(ws, *FILE_READS[how])
    assert state.status == "error" and SECRET not in said(state)
    assert "rule which prevents" in state.error and "hard links" in state.error, state.error
    assert stage.asks == []


@pytest.mark.parametrize("how", list(FOLDER_READS), ids=list(FOLDER_READS))
async def test_with_outside_denied_a_folder_search_leaves_a_hard_link_out_and_names_it(
        bwrap, stage, secret_link, engine, how):
    ws = stage.workspace(DENY_OUTSIDE, "required", answer="always")
    state = await call(ws, *FOLDER_READS[how])
    assert state.status == "completed" and SECRET not in said(state), said(state)
    assert "data/linked.txt" in state.output and "hard links" in state.output  # named, match or not
    assert state.metadata["linked"] == 1


async def test_a_folder_search_still_finds_what_the_projects_own_files_hold(bwrap, stage, secret_link, engine):
    (stage.root / "data" / "own.txt").write_text(f"{SECRET} own\n")
    ws = stage.workspace(DENY_OUTSIDE, "required", answer="always")
    state = await call(ws, "grep", {"pattern": "TOPSECRET"})
    assert f"{SECRET} own" in state.output and f"{SECRET} outside" not in state.output


@pytest.mark.parametrize("how", list(WRITES), ids=list(WRITES))
async def test_with_outside_denied_a_write_through_a_hard_link_is_refused_whatever_is_approved(
        bwrap, stage, secret_link, how):
    ws = stage.workspace(DENY_OUTSIDE, "required", answer="always")
    state = await call(ws, *WRITES[how])
    assert state.status == "error" and "hard links" in state.error, state.error
    assert stage.secret.read_text() == f"{SECRET} outside\n" and secret_link.read_text() == f"{SECRET} outside\n"


@pytest.mark.parametrize("how", list(FILE_READS), ids=list(FILE_READS))
async def test_unless_denied_a_read_through_a_hard_link_asks_external_directory_and_says_why(
        stage, secret_link, engine, how):
    ws = stage.workspace({"*": "allow", "external_directory": "ask"}, "off", answer="reject")
    state = await call(ws, *FILE_READS[how])
    assert state.status == "error" and SECRET not in said(state)
    [request] = [r for r in stage.asks if r.permission == "external_directory"]
    assert request.patterns == [str(secret_link)] and "hard links" in request.metadata["reason"]


async def test_approved_the_read_through_a_hard_link_goes_ahead(stage, secret_link):
    ws = stage.workspace({"*": "allow", "external_directory": "ask"}, "off", answer="once")
    state = await call(ws, "read", {"path": "data/linked.txt"})
    assert state.status == "completed" and f"{SECRET} outside" in state.output
    assert [r.permission for r in stage.asks] == ["external_directory"]


@pytest.mark.parametrize("how", [*FILE_READS, *FOLDER_READS][:3], ids=[*FILE_READS, *FOLDER_READS][:3])
async def test_with_the_link_check_weakened_the_same_reads_leak(bwrap, stage, secret_link, engine, how,
                                                                monkeypatch):
    """The control: judged by the path alone, the file is the project's and the outside secret is read."""
    monkeypatch.setattr("opencode_nb.tool.files.access.other_names", lambda info: 0)
    monkeypatch.setattr("opencode_nb.tool.grep.other_names", lambda info: 0)
    ws = stage.workspace(DENY_OUTSIDE, "required", answer="always")
    state = await call(ws, *{**FILE_READS, **FOLDER_READS}[how])
    assert f"{SECRET} outside" in said(state), said(state)
