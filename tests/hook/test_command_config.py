"""`hooks:` in the configuration: Claude Code's shape, loaded as written (a copied hook file works), mistakes said
at their file and line; and a project's own hooks run only once the person approved them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opencode_nb.config import ConfigError, LoadedConfig, load_config
from opencode_nb.hook import CommandHooks, HookApprovals, SessionInfo, hook_entries

CLAUDE_CODE_FILE = {
    "hooks": {
        "PreToolUse": [{
            "matcher": "Bash",
            "hooks": [{"type": "command", "timeout": 10, "statusMessage": "Checking the command",
                       "command": "jq -r .tool_input.command | grep -q 'git push' && "
                                  "{ echo 'Pushing is for people.' >&2; exit 2; } || exit 0"}],
        }],
        "Notification": [{"hooks": [{"type": "command", "command": "echo notified >> note.log"}]}],
    }
}
"""A Claude Code settings file's `hooks`, with a key of Claude Code's this project has no use for."""


class Project:
    """A repository with its own config file, and a person's config dir and data dir outside it."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.repo = base / "repo"
        self.global_dir = base / "xdg" / "opencode_nb"
        self.data_dir = base / "data"
        (self.repo / ".git").mkdir(parents=True)
        self.global_dir.mkdir(parents=True)

    def load(self) -> LoadedConfig:
        return load_config(self.repo, env={"XDG_CONFIG_HOME": str(self.base / "xdg"), "HOME": str(self.base / "home")})

    def hooks(self) -> CommandHooks:
        return CommandHooks(hook_entries(self.load()), project_dir=self.repo, approvals=HookApprovals(self.data_dir),
                            session_info=SessionInfo("ses_1", self.repo))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def has_jq() -> bool:
    import shutil

    return shutil.which("jq") is not None


@pytest.mark.skipif(not has_jq(), reason="the copied hook uses jq")
async def test_a_claude_code_hook_file_copied_as_it_is_blocks_our_bash(project):
    (project.global_dir / "opencode.yaml").write_text(json.dumps(CLAUDE_CODE_FILE, indent=2))  # JSON is YAML
    hooks = project.hooks()
    blocked = await hooks.run("PreToolUse", {"tool_input": {"command": "git push origin main"}}, tool_name="bash")
    assert blocked.denies and blocked.reason == "Pushing is for people."
    fine = await hooks.run("PreToolUse", {"tool_input": {"command": "git status"}}, tool_name="bash")
    assert not fine.denies and fine.errors == []
    await hooks.run("Notification", {"message": "waiting"})
    assert (project.repo / "note.log").read_text() == "notified\n"


def test_the_persons_own_hooks_need_no_approval_and_the_projects_do(project):
    (project.global_dir / "opencode.yaml").write_text(
        "hooks:\n  Stop:\n    - hooks: [{type: command, command: 'true'}]\n")
    (project.repo / "opencode.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: bash\n      hooks: [{type: command, command: ./check.sh}]\n")
    by_event = {e.event: e for e in hook_entries(project.load())}
    assert not by_event["Stop"].project and by_event["PreToolUse"].project
    assert by_event["PreToolUse"].source == str(project.repo / "opencode.yaml") and by_event["PreToolUse"].line == 4
    assert project.hooks().unapproved() == [by_event["PreToolUse"]]


def project_hook(project: Project, script: str = "echo ran >> hook.log") -> Path:
    (project.repo / "check.sh").write_text(f"#!/bin/sh\n{script}\n")
    (project.repo / "check.sh").chmod(0o755)
    (project.repo / "opencode.yaml").write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: [{type: command, command: ./check.sh}]\n")
    log = project.repo / "hook.log"
    log.write_text("")
    return log


async def test_an_unapproved_project_hook_never_runs_and_the_person_is_told_once(project):
    log = project_hook(project)
    hooks = project.hooks()
    first = await hooks.run("PreToolUse", {"tool_input": {"command": "ls"}}, tool_name="bash")
    again = await hooks.run("PreToolUse", {"tool_input": {"command": "ls"}}, tool_name="bash")
    assert log.read_text() == ""
    assert first.errors == [f'PreToolUse hook "./check.sh" from {project.repo / "opencode.yaml"} was not run: the '
                            "project defines it, and it runs only once you approve it"]
    assert again.errors == [] and not again.denies


async def test_an_approved_project_hook_runs_until_its_script_changes(project):
    log = project_hook(project)
    hooks = project.hooks()
    [entry] = hooks.unapproved()
    hooks.approve(entry)
    await hooks.run("PreToolUse", {}, tool_name="bash")
    assert log.read_text() == "ran\n"
    assert project.hooks().unapproved() == []  # remembered: a new kernel's hooks need no new approval

    (project.repo / "check.sh").write_text("#!/bin/sh\necho changed >> hook.log\n")
    outcome = await hooks.run("PreToolUse", {}, tool_name="bash")
    assert log.read_text() == "ran\n" and "was not run" in outcome.errors[0]
    assert hooks.changes(entry) == ["check.sh changed"]


async def test_without_an_approvals_store_no_project_hook_runs(project):
    log = project_hook(project)
    hooks = CommandHooks(hook_entries(project.load()), project_dir=project.repo)
    await hooks.run("PreToolUse", {}, tool_name="bash")
    assert log.read_text() == ""


def test_states_list_each_hook_with_its_approval_and_last_outcome(project):
    project_hook(project)
    [state] = project.hooks().states()
    assert (state.entry.command, state.approved, state.last) == ("./check.sh", False, None)


def write(project: Project, text: str) -> Path:
    path = project.repo / "opencode.yaml"
    path.write_text(text)
    return path


def test_an_unknown_event_is_said_at_its_line_with_the_event_meant(project):
    path = write(project, "model: scripted/demo\nhooks:\n  PreTooluse: []\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value).startswith(f"{path}:3 hooks.PreTooluse: 'PreTooluse' is not one of PreToolUse, ")
    assert str(err.value).endswith("(did you mean PreToolUse?)")


def test_a_matcher_that_is_no_regular_expression_is_said_at_its_line(project):
    path = write(project, "hooks:\n  PreToolUse:\n    - matcher: 'Bash('\n      hooks: [{type: command, command: x}]\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert str(err.value).startswith(f"{path}:3 hooks.PreToolUse.0.matcher: ")
    assert "is not a regular expression" in str(err.value)


def test_a_command_hook_without_a_command_and_a_bad_timeout_are_said(project):
    write(project, "hooks:\n  Stop:\n    - hooks:\n        - {type: command}\n        - {command: x, timeout: 0}\n")
    with pytest.raises(ConfigError) as err:
        project.load()
    assert "hooks.Stop.0.hooks.0: " in str(err.value) and "needs `command`" in str(err.value)
    assert "hooks.Stop.0.hooks.1.timeout: 0 must be greater than 0" in str(err.value)


def test_hooks_left_empty_load_as_no_hooks(project):
    write(project, "hooks:\n  PreToolUse:\n")
    assert project.load().config.hooks == {"PreToolUse": []}


def test_claude_codes_events_and_hook_kinds_that_never_run_here_still_load(project):
    write(project, json.dumps({"hooks": {
        "PermissionRequest": [{"hooks": [{"type": "command", "command": "x"}]}],
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "Is the work done?"}]}]}}))
    entries = hook_entries(project.load())
    assert [(e.event, e.runs) for e in entries] == [("PermissionRequest", False), ("Stop", False)]
    assert not CommandHooks(entries, project_dir=project.repo)
