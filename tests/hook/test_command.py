"""Command hooks run as Claude Code runs them: the event as JSON on stdin, the answer in the exit code or in JSON
on stdout; several at once; stopped, process group and all, at their timeout. Real commands, in a tmp folder."""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from opencode_nb.config import load_config
from opencode_nb.hook import NOTHING, CommandHooks, HookOutcome, SessionInfo, hook_entries, sandboxed
from opencode_nb.sandbox.policy import Backend, ShellSandbox, find_backend


def hooks_for(tmp_path: Path, hooks: dict[str, Any]) -> CommandHooks:
    """The person's own hooks (given as a mapping in code: no approval needed), for a project at `tmp_path`."""
    (tmp_path / ".git").mkdir(exist_ok=True)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    loaded = load_config(tmp_path, {"hooks": hooks}, env=env)
    return CommandHooks(hook_entries(loaded), project_dir=tmp_path,
                        session_info=SessionInfo("ses_1", tmp_path, permission_mode="default"))


def pre_tool(command: str, matcher: str = "bash", timeout: float | None = None) -> dict[str, Any]:
    hook: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        hook["timeout"] = timeout
    return {"PreToolUse": [{"matcher": matcher, "hooks": [hook]}]}


BASH_CALL = {"tool_input": {"command": "rm -rf data"}, "tool_use_id": "call_1"}


async def test_exit_2_blocks_the_call_and_its_stderr_is_the_reason(tmp_path):
    hooks = hooks_for(tmp_path, pre_tool("echo 'no rm here' >&2; exit 2"))
    outcome = await hooks.run("PreToolUse", BASH_CALL, tool_name="bash")
    assert outcome.blocked and outcome.denies and outcome.decision == "deny"
    assert outcome.reason == "no rm here"


async def test_the_hook_reads_the_event_as_json_on_stdin_and_the_project_in_its_environment(tmp_path):
    line = 'cat > seen.json; echo "$CLAUDE_PROJECT_DIR $OPENCODE_NB_PROJECT_DIR" > env.txt'
    hooks = hooks_for(tmp_path, pre_tool(line))
    assert await hooks.run("PreToolUse", BASH_CALL, tool_name="bash") == HookOutcome()
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen == {"session_id": "ses_1", "transcript_path": None, "cwd": str(tmp_path),
                    "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "bash",
                    "tool_input": {"command": "rm -rf data"}, "tool_use_id": "call_1"}
    assert (tmp_path / "env.txt").read_text().split() == [str(tmp_path), str(tmp_path)]


async def test_post_tool_use_receives_the_input_and_the_output(tmp_path):
    hooks = hooks_for(tmp_path, {"PostToolUse": [{"matcher": "write", "hooks": [
        {"type": "command", "command": "cat > seen.json"}]}]})
    await hooks.run("PostToolUse", {"tool_input": {"file_path": "a.py", "content": "x = 1\n"},
                                    "tool_response": {"output": "Wrote a.py"}}, tool_name="write")
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["tool_input"]["file_path"] == "a.py" and seen["tool_response"] == {"output": "Wrote a.py"}


def answering(answer: dict[str, Any]) -> str:
    return f"cat > /dev/null; echo '{json.dumps(answer)}'"


@pytest.mark.parametrize("decision", ["allow", "deny", "ask"])
async def test_a_json_permission_decision_is_read_with_its_reason(tmp_path, decision):
    hooks = hooks_for(tmp_path, pre_tool(answering({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": decision, "permissionDecisionReason": "policy"}})))
    outcome = await hooks.run("PreToolUse", BASH_CALL, tool_name="bash")
    assert (outcome.decision, outcome.reason, outcome.blocked) == (decision, "policy", False)
    assert outcome.denies == (decision == "deny")


@pytest.mark.parametrize(("legacy", "decision", "blocked"), [("approve", "allow", False), ("block", "deny", True)])
async def test_claude_codes_older_approve_and_block_are_read_as_allow_and_deny(tmp_path, legacy, decision, blocked):
    hooks = hooks_for(tmp_path, pre_tool(answering({"decision": legacy, "reason": "because"})))
    outcome = await hooks.run("PreToolUse", BASH_CALL, tool_name="bash")
    assert (outcome.decision, outcome.blocked, outcome.reason) == (decision, blocked, "because")


async def test_updated_input_replaces_the_arguments(tmp_path):
    hooks = hooks_for(tmp_path, pre_tool(answering({"hookSpecificOutput": {
        "permissionDecision": "allow", "updatedInput": {"command": "rm -ri data"}}})))
    outcome = await hooks.run("PreToolUse", BASH_CALL, tool_name="bash")
    assert outcome.updated_input == {"command": "rm -ri data"}


async def test_continue_false_stops_the_run_and_system_messages_are_for_the_person(tmp_path):
    hooks = hooks_for(tmp_path, {"Stop": [{"hooks": [{"type": "command", "command": answering(
        {"continue": False, "stopReason": "budget spent", "systemMessage": "3 of 3 runs used"})}]}]})
    outcome = await hooks.run("Stop", {"stop_hook_active": False})
    assert outcome.stop == "budget spent" and outcome.system_messages == ["3 of 3 runs used"]


async def test_another_exit_code_is_an_error_for_the_person_and_the_call_goes_on(tmp_path):
    hooks = hooks_for(tmp_path, pre_tool("echo 'jq: not found' >&2; exit 127"))
    outcome = await hooks.run("PreToolUse", BASH_CALL, tool_name="bash")
    assert not outcome.denies and outcome.decision is None
    assert outcome.errors == ['PreToolUse hook "echo \'jq: not found\' >&2; exit 127" failed with exit code 127: '
                              "jq: not found"]


async def test_output_that_looks_like_json_but_is_not_is_an_error_and_nothing_else(tmp_path):
    hooks = hooks_for(tmp_path, pre_tool("echo '{\"decision\": '"))
    outcome = await hooks.run("PreToolUse", BASH_CALL, tool_name="bash")
    assert not outcome.denies and len(outcome.errors) == 1 and "is not: ignored" in outcome.errors[0]


async def test_plain_output_is_context_for_a_prompt_and_ignored_for_a_tool_call(tmp_path):
    hooks = hooks_for(tmp_path, {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'Sprint ends Friday.'"}]}],
        **pre_tool("echo 'just chatting'")})
    prompted = await hooks.run("UserPromptSubmit", {"prompt": "plan the week"})
    assert prompted.additional_context == ["Sprint ends Friday."]
    assert await hooks.run("PreToolUse", BASH_CALL, tool_name="bash") == HookOutcome()


async def test_additional_context_from_json(tmp_path):
    hooks = hooks_for(tmp_path, {"SessionStart": [{"hooks": [{"type": "command", "command": answering(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "On branch main."}})}]}]})
    outcome = await hooks.run("SessionStart", {"source": "startup"})
    assert outcome.additional_context == ["On branch main."]


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie waiting for whoever inherited it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


async def test_a_hook_past_its_timeout_is_stopped_with_its_children_and_the_call_goes_on(tmp_path):
    hooks = hooks_for(tmp_path, pre_tool("sleep 30 & echo $! > child.pid; wait", timeout=0.5))
    started = time.monotonic()
    outcome = await hooks.run("PreToolUse", BASH_CALL, tool_name="bash")
    assert time.monotonic() - started < 5
    assert not outcome.denies
    assert outcome.errors == ['PreToolUse hook "sleep 30 & echo $! > child.pid; wait" timed out after 0.5 s and was '
                              "stopped; the call went on without it"]
    child = int((tmp_path / "child.pid").read_text())
    deadline = time.monotonic() + 2
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(child)


async def test_matching_hooks_run_at_the_same_time_and_the_strictest_answer_wins(tmp_path):
    allow = answering({"hookSpecificOutput": {"permissionDecision": "allow"}})
    deny = answering({"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}})
    hooks = hooks_for(tmp_path, {"PreToolUse": [
        {"matcher": "*", "hooks": [{"type": "command", "command": f"sleep 0.6; {allow}"}]},
        {"matcher": "Bash", "hooks": [{"type": "command", "command": f"sleep 0.6; {deny}"},
                                      {"type": "command", "command": "sleep 0.6; echo 'ctx'"}]}]})
    started = time.monotonic()
    outcome = await hooks.run("PreToolUse", BASH_CALL, tool_name="bash")
    assert time.monotonic() - started < 1.1
    assert (outcome.decision, outcome.reason) == ("deny", "no")


async def test_an_identical_command_matched_twice_runs_once(tmp_path):
    line = {"type": "command", "command": "echo x >> runs.log"}
    hooks = hooks_for(tmp_path, {"PreToolUse": [{"matcher": "bash", "hooks": [line]}, {"hooks": [line]}]})
    await hooks.run("PreToolUse", BASH_CALL, tool_name="bash")
    assert (tmp_path / "runs.log").read_text() == "x\n"


@pytest.mark.parametrize(("matcher", "tool", "runs"), [
    ("Bash", "bash", True), ("bash", "bash", True), ("Edit|Write", "write", True),
    ("Notebook.*", "notebook_edit", True),
    ("bash", "bash_extra", False), ("Bash", "write", False), ("bash", "Bash", False), ("*", "webfetch", True),
    ("", "grep", True), ("mcp_.*", "mcp_github_search", True)])
def test_a_matcher_matches_the_whole_name_ours_or_claude_codes(tmp_path, matcher, tool, runs):
    hooks = hooks_for(tmp_path, pre_tool("true", matcher=matcher))
    assert bool(hooks.matching("PreToolUse", tool)) == runs


def test_events_without_a_tool_run_every_matcher_group(tmp_path):
    hooks = hooks_for(tmp_path, {"Stop": [{"matcher": "bash", "hooks": [{"type": "command", "command": "true"}]}]})
    assert len(hooks.matching("Stop")) == 1 and hooks.matching("PreToolUse", "bash") == []


async def test_no_hooks_configured_answers_nothing_and_runs_nothing(tmp_path):
    hooks = hooks_for(tmp_path, {})
    assert not hooks
    assert await hooks.run("PreToolUse", BASH_CALL, tool_name="bash") is NOTHING


def test_combining_keeps_everyones_context_and_the_first_updated_input():
    first = HookOutcome(decision="allow", updated_input={"a": 1}, additional_context=["one"], errors=["e1"])
    second = HookOutcome(decision="ask", reason="check", updated_input={"a": 2}, additional_context=["two"])
    combined = HookOutcome.combine([first, second])
    assert combined == HookOutcome(decision="ask", reason="check", updated_input={"a": 1},
                                   additional_context=["one", "two"], errors=["e1"])


def test_a_block_blocks_whatever_the_others_allow():
    combined = HookOutcome.combine([HookOutcome(decision="allow", reason="fine"),
                                    HookOutcome(blocked=True, reason="stop")])
    assert combined.blocked and combined.reason == "stop"


async def test_a_hook_that_never_reads_a_large_input_is_no_error(tmp_path):
    hooks = hooks_for(tmp_path, pre_tool("exit 0", matcher="write"))
    outcome = await hooks.run("PreToolUse", {"tool_input": {"content": "x" * 2_000_000}}, tool_name="write")
    assert outcome == HookOutcome()


async def test_a_secret_the_hook_prints_is_redacted_before_anyone_reads_it(tmp_path, monkeypatch):
    monkeypatch.setenv("DEPLOY_TOKEN", "tok-7f3a9c2e5b")
    hooks = hooks_for(tmp_path, pre_tool("echo \"refused, token tok-7f3a9c2e5b\" >&2; exit 2"))
    outcome = await hooks.run("PreToolUse", BASH_CALL, tool_name="bash")
    assert outcome.blocked and "tok-7f3a9c2e5b" not in (outcome.reason or "")


def test_the_hook_environment_has_no_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("DEPLOY_TOKEN", "tok-7f3a9c2e5b")
    assert "DEPLOY_TOKEN" not in hooks_for(tmp_path, {}).env() and os.environ["DEPLOY_TOKEN"]


SANDBOX = isinstance(find_backend(), Backend)


@pytest.mark.skipif(not SANDBOX, reason="no OS sandbox on this machine")
async def test_in_the_sandbox_a_hook_writes_the_project_only_and_is_still_stopped_at_its_timeout(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    run = sandboxed(ShellSandbox("required", writable=[project]), quarantine=tmp_path / "data" / "quarantine")
    hooks = hooks_for(project, pre_tool(f"echo in > mine.txt; echo out > {outside}/theirs.txt; sleep 30",
                                        timeout=1))
    hooks = replace(hooks, run_command=run)
    started = time.monotonic()
    outcome = await hooks.run("PreToolUse", BASH_CALL, tool_name="bash")
    assert time.monotonic() - started < 5 and "timed out after 1 s" in outcome.errors[0]
    assert (project / "mine.txt").read_text() == "in\n" and not (outside / "theirs.txt").exists()


async def test_a_run_stopped_by_the_person_stops_its_hooks_process_group(tmp_path):
    hooks = hooks_for(tmp_path, pre_tool("sleep 30 & echo $! > child.pid; wait"))
    running = asyncio.ensure_future(hooks.run("PreToolUse", BASH_CALL, tool_name="bash"))
    while not (tmp_path / "child.pid").exists() or not (tmp_path / "child.pid").read_text().strip():
        await asyncio.sleep(0.01)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    child = int((tmp_path / "child.pid").read_text())
    deadline = time.monotonic() + 2
    while alive(child) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not alive(child)
