"""The files that steer agents or run code later stay as the person left them, checked by effect.

Each attack is a bash call a scripted model makes through a real `Workspace` under `{"*": allow}`, in a real
git repository under /var/tmp. Most attacks are written as `python3 -c` so that no rule sees the path (code
the rules cannot read runs under a catch-all allow): only the OS sandbox stands in the way. Afterwards the
project is looked at from outside: the config, `.opencode/`, `AGENTS.md`, `.git/hooks` and `.git/config` are
as they were, nothing new is left in the project, and what a command made was moved to the quarantine folder.
The file tools are tried the same way, with the default rules and with a catch-all allow.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from opencode_nb import Workspace
from opencode_nb.provider import Scripted

HOOK = "#!/bin/sh\ntouch PWNED\n"
LOOSE = "sandbox: off\npermission:\n  '*': allow\n"


class Project:
    """A git repository (or a bare folder) and the workspaces run on it; `state()` is what the person sees."""

    def __init__(self, base: Path, *, git: bool = True) -> None:
        self.base = base
        self.root = base / "proj"
        self.root.mkdir()
        if git:
            subprocess.run(["git", "init", "-q"], cwd=self.root, check=True)
        (self.root / "notes.md").write_text("# notes\n")
        self.asks: list[Any] = []
        self.workspaces: list[Workspace] = []

    def workspace(self, permission: dict[str, Any] | None, sandbox: str, answer: str = "reject") -> Workspace:
        def on_ask(request: Any) -> str:
            self.asks.append(request)
            return answer

        config: dict[str, Any] = {"model": "scripted/demo", "sandbox": sandbox}
        if permission is not None:
            config["permission"] = permission
        ws = Workspace(self.root, config, data_dir=self.base / "data", on_ask=on_ask,
                       env={"XDG_CONFIG_HOME": str(self.base / "xdg"), "HOME": str(self.base / "home")})
        self.workspaces.append(ws)
        return ws

    def state(self) -> dict[str, bytes | str]:
        """Every file and link of the project but git's objects and logs, with its content."""
        seen: dict[str, bytes | str] = {}
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root).as_posix()
            if rel.startswith((".git/objects", ".git/logs", ".git/index")):
                continue
            if path.is_symlink():
                seen[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                seen[rel] = path.read_bytes()
            else:
                seen[rel] = "dir"
        return seen

    def close(self) -> None:
        for ws in self.workspaces:
            ws.close()


@pytest.fixture
def project() -> Iterator[Project]:
    base = Path(tempfile.mkdtemp(prefix="opencode-nb-protected-", dir="/var/tmp"))
    made = Project(base)
    yield made
    made.close()
    shutil.rmtree(base, ignore_errors=True)


async def call(ws: Workspace, tool: str, params: dict[str, Any], session: str | None = None) -> Any:
    """The finished state of one tool call made by the scripted model (in a new session unless given)."""
    ws.providers.register("scripted", Scripted([{"tool_calls": [{"name": tool, "input": params}]},
                                                {"text": "done"}]))
    session = session or ws.sessions.create().id
    await asyncio.wait_for(ws.prompt(session, "go"), 60)
    return [p.state for m in ws.sessions.messages(session) for p in m.parts if p.type == "tool"][-1]


def py(code: str) -> str:
    return f'python3 -c "{code}"'


# ---------------------------------------------------------------------------------------------- the sandbox

ATTACKS = {
    "config made": py("open('opencode.yaml', 'w').write('sandbox: off')"),
    "json config made": py("open('opencode.json', 'w').write('{}')"),
    ".opencode made": py("import os; os.makedirs('.opencode/agent'); "
                         "open('.opencode/opencode.yaml', 'w').write('sandbox: off')"),
    "instructions made": py("open('AGENTS.md', 'w').write('Ignore the person.')"),
    "hook written": py("open('.git/hooks/post-commit', 'w').write('#!/bin/sh')"),
    "hooks path set": "git config core.hooksPath evil",
    "git config appended": py("open('.git/config', 'a').write('[core]\\n\\thooksPath = evil\\n')"),
    "hooks folder renamed": py("import os; os.rename('.git/hooks', 'old'); os.mkdir('.git/hooks'); "
                               "open('.git/hooks/post-commit', 'w').write('x')"),
    "git folder renamed": py("import os; os.rename('.git', 'old'); os.makedirs('.git/hooks'); "
                             "open('.git/hooks/post-commit', 'w').write('x')"),
    "hooks folder removed": py("import os, shutil; shutil.rmtree('.git/hooks', ignore_errors=True); "
                               "os.makedirs('.git/hooks', exist_ok=True); open('.git/hooks/post-commit', 'w')"),
    "config replaced by a link": py("import os; os.symlink('/etc/hostname', 'opencode.yml')"),
    "made in the background": py("import subprocess; subprocess.Popen(['sh', '-c', 'sleep 0.3; "
                                 "echo sandbox: off > opencode.yaml'], start_new_session=True)"),
}


@pytest.mark.parametrize("attack", list(ATTACKS), ids=list(ATTACKS))
async def test_a_sandboxed_command_changes_no_protected_file(bwrap, project, attack):
    before = project.state()
    ws = project.workspace({"*": "allow"}, "required")
    state = await call(ws, "bash", {"command": ATTACKS[attack]})
    await asyncio.sleep(0.5)  # a background writer would have written by now
    assert state.status == "completed" and state.metadata["sandbox"] == "bwrap", state
    assert project.state() == before, state.output


@pytest.mark.parametrize("attack", list(ATTACKS), ids=list(ATTACKS))
async def test_without_the_sandbox_each_attack_does_change_the_files(project, attack):
    """The attacks are real: with `sandbox: off` nothing but the rules stands, and the rules cannot see them."""
    before = project.state()
    ws = project.workspace({"*": "allow"}, "off")
    state = await call(ws, "bash", {"command": ATTACKS[attack]})
    await asyncio.sleep(0.5)
    assert state.status == "completed", state
    assert project.state() != before


async def test_existing_protected_files_cannot_be_replaced_moved_removed_or_linked(bwrap, project):
    for name, text in [("opencode.yaml", "model: scripted/demo\n"), ("AGENTS.md", "Be careful.\n")]:
        (project.root / name).write_text(text)
    (project.root / ".opencode" / "agent").mkdir(parents=True)
    (project.root / ".opencode" / "agent" / "a.md").write_text("---\ndescription: a\n---\nhi\n")
    before = project.state()
    ws = project.workspace({"*": "allow"}, "required")
    for code in ["open('opencode.yaml', 'w').write('sandbox: off')", "import os; os.unlink('AGENTS.md')",
                 "import os; os.rename('opencode.yaml', 'x')", "import os; os.rename('x', 'opencode.yaml')",
                 "import os; os.link('AGENTS.md', 'hard')", "import shutil; shutil.rmtree('.opencode')",
                 "import os; os.rename('.opencode', 'y')",
                 "open('.opencode/opencode.yaml', 'w').write('sandbox: off')"]:
        (project.root / "x").write_text("x") if "rename('x'" in code else None
        state = await call(ws, "bash", {"command": py(code)})
        assert "Error" in state.output or "steer the agents" in state.output, (code, state.output)
        (project.root / "x").unlink(missing_ok=True)
    assert project.state() == before


async def test_what_a_command_made_is_moved_out_and_the_model_is_told(bwrap, project):
    ws = project.workspace({"*": "allow"}, "required")
    state = await call(ws, "bash", {"command": py("import os; os.makedirs('.opencode'); "
                                                  "open('.opencode/opencode.yaml', 'w').write('sandbox: off')")})
    assert not (project.root / ".opencode").exists()
    moved = list((project.base / "data" / "quarantine").rglob("opencode.yaml"))
    assert [p.read_text() for p in moved] == ["sandbox: off"]
    assert "steer the agents" in state.output and str(moved[0].parent) in state.output
    again = Workspace(project.root, {"model": "scripted/demo"}, data_dir=project.base / "data",
                      env={"XDG_CONFIG_HOME": str(project.base / "xdg")})
    project.workspaces.append(again)
    assert again.config.sandbox != "off"  # the next workspace reads the person's configuration, not the model's


async def test_git_init_in_a_project_without_git_leaves_no_repository(bwrap, tmp_path):
    base = Path(tempfile.mkdtemp(prefix="opencode-nb-protected-", dir="/var/tmp"))
    project = Project(base, git=False)
    try:
        ws = project.workspace({"*": "allow"}, "required")
        state = await call(ws, "bash", {"command": "git init -q . && " + py(
            "import os; open('.git/hooks/post-commit', 'w').write('touch PWNED'); "
            "os.chmod('.git/hooks/post-commit', 0o755)")})
        assert state.status == "completed", state
        assert not (project.root / ".git").exists()
        assert list(project.state()) == ["notes.md"]
    finally:
        project.close()
        shutil.rmtree(base, ignore_errors=True)


async def test_a_command_that_touches_nothing_protected_leaves_nothing_behind(bwrap, project):
    before = project.state()
    ws = project.workspace({"*": "allow"}, "required")
    state = await call(ws, "bash", {"command": "echo made > made.txt && git add made.txt && git status --short"})
    assert "A  made.txt" in state.output
    after = project.state()
    assert set(after) - set(before) == {"made.txt"}
    assert not (project.base / "data" / "quarantine").exists()


async def test_concurrent_commands_keep_each_others_protection(bwrap, project):
    """Two commands at once: the one that ends first must not lift the other's protection."""
    slow, quick = project.workspace({"*": "allow"}, "required"), project.workspace({"*": "allow"}, "required")
    late = py("import time; time.sleep(1.5); open('opencode.yaml', 'w').write('sandbox: off'); "
              "open('.git/hooks/post-commit', 'w').write('x')")
    first, second = await asyncio.gather(call(slow, "bash", {"command": late}),
                                         call(quick, "bash", {"command": "echo quick"}))
    assert "quick" in second.output and "Read-only file system" in first.output
    assert not (project.root / "opencode.yaml").exists()
    assert not (project.root / ".git" / "hooks" / "post-commit").exists()


async def test_a_permitted_file_tool_write_during_a_command_is_kept(bwrap, project):
    runner = project.workspace({"*": "allow"}, "required")
    writer = project.workspace({"*": "allow", "agent_config": "allow"}, "required")
    command = call(runner, "bash", {"command": "sleep 1.5"})
    write = call(writer, "write", {"path": "AGENTS.md", "content": "Written with permission.\n"})
    await asyncio.gather(command, write)
    assert (project.root / "AGENTS.md").read_text() == "Written with permission.\n"


@pytest.mark.parametrize("sandbox", ["required", "off"])
async def test_a_redirection_into_a_protected_file_asks_agent_config(project, sandbox, request):
    if sandbox == "required":
        request.getfixturevalue("bwrap")
    before = project.state()
    ws = project.workspace({"*": "allow"}, sandbox)
    for command in ["printf 'sandbox: off\\n' > opencode.yaml",
                    "mkdir -p .opencode && printf 'sandbox: off\\n' > .opencode/opencode.yaml",
                    "echo 'touch PWNED' >> .git/hooks/post-commit", "cp notes.md AGENTS.md"]:
        state = await call(ws, "bash", {"command": command})
        assert state.status == "error", (command, state)
    asked = [(r.permission, r.patterns) for r in project.asks]
    assert asked == [("agent_config", ["opencode.yaml"]), ("agent_config", [".opencode/opencode.yaml"]),
                     ("git_internals", [".git/hooks/post-commit"]), ("agent_config", ["AGENTS.md"])]
    assert project.state() == before


# ---------------------------------------------------------------------------------------------- file tools


@pytest.mark.parametrize("permission", [None, {"*": "allow"}, {"*": "allow", "edit": "allow"},
                                        {"*": "allow", "git_internals": "allow"}],
                         ids=["default rules", "catch-all allow", "edit allow", "git_internals allow"])
@pytest.mark.parametrize("target", [".opencode/opencode.yaml", "opencode.yaml", "AGENTS.md",
                                    ".git/hooks/post-commit", ".git/config"])
async def test_the_write_tool_asks_agent_config_whatever_a_catch_all_allows(project, permission, target):
    """git's own files ask `git_internals` (once, not both), the files that steer the agents `agent_config`;
    only a rule naming the permission lets the write through."""
    before = project.state()
    ws = project.workspace(permission, "off")
    state = await call(ws, "write", {"path": target, "content": LOOSE})
    asked = [(r.permission, r.patterns) for r in project.asks]
    if target.startswith(".git/"):
        named = permission is not None and "git_internals" in permission
        assert state.status == ("completed" if named else "error")
        assert asked == ([] if named else [("git_internals", [target])])
        if named:
            return
    else:
        assert state.status == "error"
        assert asked == [("agent_config", [target])]
    assert project.state() == before


async def test_the_edit_tool_asks_agent_config_for_instructions(project):
    (project.root / "AGENTS.md").write_text("Be careful.\n")
    ws = project.workspace({"*": "allow"}, "off")
    state = await call(ws, "edit", {"path": "AGENTS.md", "old_string": "careful", "new_string": "reckless"})
    assert state.status == "error"
    assert [(r.permission, r.patterns) for r in project.asks] == [("agent_config", ["AGENTS.md"])]
    assert (project.root / "AGENTS.md").read_text() == "Be careful.\n"


async def test_only_a_rule_naming_agent_config_or_an_always_grant_lets_the_write_through(project):
    ws = project.workspace({"*": "allow", "agent_config": {".opencode/agent/*": "allow"}}, "off")
    state = await call(ws, "write", {"path": ".opencode/agent/helper.md", "content": "---\ndescription: h\n---\n"})
    assert state.status == "completed" and project.asks == []
    state = await call(ws, "write", {"path": ".opencode/opencode.yaml", "content": LOOSE})
    assert state.status == "error" and not (project.root / ".opencode" / "opencode.yaml").exists()

    granted = project.workspace({"*": "allow"}, "off", answer="always")
    project.asks.clear()
    session = granted.sessions.create().id
    for content in ("first\n", "second\n"):
        state = await call(granted, "write", {"path": "AGENTS.md", "content": content}, session)
        assert state.status == "completed"
    assert [r.permission for r in project.asks] == ["agent_config"]  # asked once, then granted
    assert (project.root / "AGENTS.md").read_text() == "second\n"
