"""Hooks and plugins by effect, through the real loop: a real Anthropic SDK talks to a local server that speaks
its wire protocol, the tools run for real in a temporary project, and the hooks are real shell commands.

What the model reads is checked in the next request the SDK sent; what a hook refused is checked on disk.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from opencode_nb import Workspace
from opencode_nb.errors import HookBlockedError
from opencode_nb.session.events import HookReported
from tests.provider.wire import WireServer, anthropic_stream

pytestmark = pytest.mark.timeout(120)

MODEL = "anthropic/claude-sonnet-4-5"


@pytest.fixture
def server():
    started = WireServer()
    yield started
    started.close()


def bash_then_text(command: str, text: str = "Done.") -> list[Any]:
    return [anthropic_stream({"tool": "bash", "id": "toolu_1", "json": json.dumps(
        {"command": command, "description": "run it"})}, stop="tool_use"), anthropic_stream({"text": text})]


def workspace(tmp_path: Path, server: WireServer, config: dict[str, Any], *, project: str = "",
              on_ask: Any = None) -> Workspace:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    if project:
        (root / "opencode.yaml").write_text(project)
    base = {"model": MODEL, "provider": {"anthropic": {"base_url": server.url, "api_key": "sk-test"}},
            "permission": {"*": "allow"}}
    return Workspace(root, {**base, **config}, data_dir=tmp_path / "data", on_ask=on_ask,
                     env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)})


def hook(command: str, matcher: str = "bash", timeout: int | None = None) -> list[dict[str, Any]]:
    entry: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        entry["timeout"] = timeout
    return [{"matcher": matcher, "hooks": [entry]}]


def script(root: Path, name: str, body: str) -> str:
    """A hook script in the project (hooks run confined: the project is where they may write)."""
    path = root / name
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return str(path)


def tool_results(server: WireServer, request: int = 1) -> list[str]:
    """The text of each tool result the model read in the `request`-th request."""
    found = []
    for message in server.received[request].body["messages"]:
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                found.append(content if isinstance(content, str) else " ".join(
                    c.get("text", "") for c in content or []))
    return found


async def run(ws: Workspace, text: str = "go") -> Any:
    """A prompt in a new session that has its title already, so no title request takes a queued answer."""
    session = ws.sessions.create()
    ws.sessions.update(session, title="Hooks at work")
    return session, await asyncio.wait_for(ws.prompt(session.id, text), 60)


GUARD = """
import json, sys
call = json.load(sys.stdin)
if call["tool_input"]["command"].startswith("rm "):
    print("rm is not allowed here: move the file to trash/ instead", file=sys.stderr)
    sys.exit(2)
"""


async def test_a_pre_tool_use_hook_exiting_2_keeps_the_file_and_the_model_reads_its_stderr(tmp_path, server):
    ws = workspace(tmp_path, server, {})
    root = ws.root
    (root / "keep.txt").write_text("kept")
    guard = script(root, "guard.py", GUARD)
    ws.close()
    ws = workspace(tmp_path, server, {"hooks": {"PreToolUse": hook(guard)}})
    server.queue(*bash_then_text("rm keep.txt"))
    with ws:
        await run(ws)
    assert (root / "keep.txt").read_text() == "kept"
    [result] = tool_results(server)
    assert "rm is not allowed here: move the file to trash/ instead" in result


async def test_a_hooks_allow_does_not_beat_a_deny_rule_but_answers_an_ask(tmp_path, server):
    allow = ('echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}\'')
    config = {"hooks": {"PreToolUse": hook(allow)}, "permission": {"bash": {"*": "ask", "rm *": "deny"}}}
    ws = workspace(tmp_path, server, config)  # nobody answers asks: headless, the policy refuses them
    (ws.root / "keep.txt").write_text("kept")
    server.queue(*bash_then_text("rm keep.txt"), *bash_then_text("touch made.txt"))
    with ws:
        await run(ws)
        await run(ws)
    assert (ws.root / "keep.txt").exists(), "the deny rule holds whatever the hook said"
    assert "deny" in tool_results(server)[0].lower()
    assert (ws.root / "made.txt").exists(), "the hook's allow answered what would have been asked"


async def test_post_tool_use_gets_the_calls_input_and_output_and_can_tell_the_model(tmp_path, server):
    ws = workspace(tmp_path, server, {})
    log = ws.root / "post.json"
    post = script(ws.root, "post.py", f"""
        import json, sys
        call = json.load(sys.stdin)
        open({str(log)!r}, "w").write(json.dumps(call))
        print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PostToolUse",
                                                  "additionalContext": "remember to commit"}}}}))
    """)
    ws.close()
    ws = workspace(tmp_path, server, {"hooks": {"PostToolUse": hook(post)}})
    server.queue(*bash_then_text("echo hello-from-bash"))
    with ws:
        await run(ws)
    seen = json.loads(log.read_text())
    assert seen["hook_event_name"] == "PostToolUse" and seen["tool_name"] == "bash"
    assert seen["tool_input"]["command"] == "echo hello-from-bash"
    assert "hello-from-bash" in seen["tool_response"]["output"]
    assert "remember to commit" in tool_results(server)[0]


async def test_updated_input_changes_what_runs(tmp_path, server):
    ws = workspace(tmp_path, server, {})
    rewrite = script(ws.root, "rewrite.py", """
        import json, sys
        call = json.load(sys.stdin)
        command = call["tool_input"]["command"].replace("echo a", "echo b")
        print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                                 "updatedInput": {**call["tool_input"], "command": command}}}))
    """)
    ws.close()
    ws = workspace(tmp_path, server, {"hooks": {"PreToolUse": hook(rewrite)}})
    server.queue(*bash_then_text("echo a > out.txt"))
    with ws:
        await run(ws)
    assert (ws.root / "out.txt").read_text() == "b\n"


async def test_an_unapproved_project_hook_never_runs_and_the_call_goes_on(tmp_path, server):
    root = tmp_path / "proj"
    root.mkdir()
    log = root / "project-hook.log"
    project = "hooks:\n  PreToolUse:\n    - matcher: bash\n      hooks:\n        - type: command\n" \
              f"          command: echo ran >> {log}\n"
    asked: list[Any] = []
    ws = workspace(tmp_path, server, {}, project=project, on_ask=lambda r: asked.append(r) or "reject")
    server.queue(*bash_then_text("touch made.txt"))
    with ws:
        await run(ws)
    assert not log.exists(), "the project's hook did not run: the person did not approve it"
    assert [r.permission for r in asked] == ["hook"] and asked[0].patterns == [f"echo ran >> {log}"]
    assert (root / "made.txt").exists()


async def test_an_approved_project_hook_runs_and_is_not_asked_about_again(tmp_path, server):
    root = tmp_path / "proj"
    root.mkdir()
    log = root / "project-hook.log"
    project = "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n" \
              f"          command: echo ran >> {log}\n"
    asked: list[Any] = []
    ws = workspace(tmp_path, server, {}, project=project, on_ask=lambda r: asked.append(r) or "once")
    server.queue(*bash_then_text("true"), *bash_then_text("true"))
    with ws:
        await run(ws)
        await run(ws)
    assert log.read_text() == "ran\nran\n" and len(asked) == 1


async def test_a_hook_that_sleeps_past_its_timeout_is_stopped_and_the_call_goes_on(tmp_path, server):
    ws = workspace(tmp_path, server, {"hooks": {"PreToolUse": hook("sleep 30", timeout=1)}})
    told: list[HookReported] = []
    ws.bus.subscribe(HookReported, told.append)
    server.queue(*bash_then_text("touch made.txt"))
    with ws:
        loop = asyncio.get_running_loop()
        started = loop.time()
        await run(ws)
        assert loop.time() - started < 20
    assert (ws.root / "made.txt").exists()
    assert any("timed out" in line for event in told for line in event.lines), told


PLUGIN = """
calls = []


class Policy:
    def permission_ask(self, request):
        return "allow" if request.permission == "bash" else None


class Broken:
    def tool_execute_before(self, call, args):
        raise RuntimeError("a bug in the plugin")


policy = Policy()
broken = Broken()
"""


async def test_a_plugins_permission_ask_answers_an_ask_and_a_plugin_that_raises_leaves_the_run_going(
        tmp_path, server, monkeypatch):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "acme_policy.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    config = {"plugin": ["acme_policy:policy", "acme_policy:broken"], "permission": {"bash": "ask"}}
    ws = workspace(tmp_path, server, config)  # headless: without the plugin the ask would be refused
    server.queue(*bash_then_text("touch made.txt"))
    with ws:
        await run(ws)
        warnings = ws.warnings
    assert (ws.root / "made.txt").exists()
    assert sum("a bug in the plugin" in w for w in warnings) == 1, warnings


async def test_a_stop_hook_that_blocks_keeps_the_agent_going_with_its_reason(tmp_path, server):
    ws = workspace(tmp_path, server, {})
    marker = ws.root / "stopped-once"
    stop = script(ws.root, "stop.py", f"""
        import json, os, sys
        call = json.load(sys.stdin)
        if not os.path.exists({str(marker)!r}):
            open({str(marker)!r}, "w").write("x")
            print(json.dumps({{"decision": "block", "reason": "run the tests before you stop"}}))
    """)
    ws.close()
    ws = workspace(tmp_path, server, {"hooks": {"Stop": hook(stop, matcher="")}})
    server.queue(anthropic_stream({"text": "All done."}), anthropic_stream({"text": "Tests pass now."}))
    with ws:
        _, result = await run(ws)
    assert result.text == "Tests pass now."
    last = server.received[1].body["messages"][-1]
    assert "run the tests before you stop" in json.dumps(last)


async def test_a_user_prompt_submit_hook_blocks_the_prompt_and_nothing_is_written(tmp_path, server):
    block = 'echo "prompts mentioning secrets are not sent" >&2; exit 2'
    ws = workspace(tmp_path, server, {"hooks": {"UserPromptSubmit": hook(block, matcher="")}})
    with ws:
        session = ws.sessions.create()
        ws.sessions.update(session, title="Hooks at work")
        with pytest.raises(HookBlockedError, match="prompts mentioning secrets are not sent"):
            await ws.prompt(session.id, "here is my secret")
        assert ws.sessions.messages(session.id) == []
    assert server.received == []


async def test_a_claude_code_hook_file_copied_verbatim_blocks_git_push(tmp_path, server):
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
        "type": "command", "timeout": 10,
        "command": "python3 -c \"import json,sys; c=json.load(sys.stdin)['tool_input']['command']; "
                   "sys.exit(2 if c.startswith('git push') else 0)\" || "
                   "{ echo 'git push is blocked' >&2; exit 2; }"}]}]}}
    ws = workspace(tmp_path, server, json.loads(json.dumps(settings)))
    server.queue(*bash_then_text("git push origin main"))
    with ws:
        await run(ws)
    assert "git push is blocked" in tool_results(server)[0]


def test_a_projects_hooks_join_the_persons_own_and_never_replace_them(tmp_path):
    from opencode_nb.config.load import load_config
    from opencode_nb.hook.config import hook_entries

    xdg = tmp_path / "xdg" / "opencode_nb"
    xdg.mkdir(parents=True)
    (xdg / "opencode.yaml").write_text("hooks:\n  PreToolUse:\n    - matcher: bash\n      hooks:\n"
                                       "        - {type: command, command: ./my-guard.sh}\n")
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "opencode.yaml").write_text("hooks:\n  PreToolUse:\n    - matcher: bash\n      hooks:\n"
                                        "        - {type: command, command: ./project-hook.sh}\n")
    loaded = load_config(root, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)})
    entries = hook_entries(loaded)
    assert [(e.command, e.project) for e in entries] == [("./my-guard.sh", False), ("./project-hook.sh", True)]
    assert entries[1].line == 5 and str(root / "opencode.yaml") in str(entries[1].source)


async def test_the_listing_names_each_hook_and_plugin_where_it_came_from_its_approval_and_last_outcome(
        tmp_path, server, monkeypatch):
    from opencode_nb.hook.report import describe

    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "acme_policy.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    project = ("hooks:\n  PostToolUse:\n    - matcher: bash\n      hooks:\n"
               "        - {type: command, command: ./lint.sh}\n")
    ws = workspace(tmp_path, server, {"hooks": {"PreToolUse": hook("true")}, "plugin": ["acme_policy:policy"]},
                   project=project, on_ask=lambda r: "reject")
    server.queue(*bash_then_text("true"))
    with ws:
        await run(ws)
        text = describe(ws.hooks)
    assert "PreToolUse [bash]: true" in text and "yours" in text and "last: exit 0" in text, text
    assert "PostToolUse [bash]: ./lint.sh" in text and f"{ws.root / 'opencode.yaml'}:5" in text
    assert "waits for your approval" in text
    assert "acme_policy:policy (config) — hook permission.ask" in text
    assert "No hooks or plugins are configured" in describe(None)


async def test_session_start_hooks_tell_the_model_once_per_session(tmp_path, server):
    ws = workspace(tmp_path, server, {"hooks": {"SessionStart": hook("echo 'This project uses uv, not pip.'",
                                                                     matcher="")}})
    server.queue(anthropic_stream({"text": "Noted."}), anthropic_stream({"text": "Again."}))
    with ws:
        session, _ = await run(ws)
        await asyncio.wait_for(ws.prompt(session.id, "and now?"), 60)
    first, second = (json.dumps(r.body["messages"]) for r in server.received)
    assert "This project uses uv, not pip." in first
    assert second.count("This project uses uv, not pip.") == 1, "told at the session's start, not at every prompt"


async def test_a_plugin_a_projects_own_file_names_is_never_imported(tmp_path, server, monkeypatch):
    (tmp_path / "plugins").mkdir()
    marker = tmp_path / "imported"
    (tmp_path / "plugins" / "project_plugin.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\nplugin = {{}}\n")
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    ws = workspace(tmp_path, server, {}, project='plugin: ["project_plugin:plugin"]\n')
    with ws:
        from opencode_nb.hook.report import describe

        listed = describe(ws.hooks)
    assert not marker.exists(), "a project's plugin is not imported"
    assert "project_plugin:plugin" in listed and "a project's plugin is not loaded" in listed, listed


async def test_a_hooks_allow_does_not_answer_the_administrators_ask(tmp_path, server, monkeypatch):
    from opencode_nb.config import managed as managed_module

    managed = tmp_path / "etc" / "managed.yaml"
    managed.parent.mkdir()
    managed.write_text('permission:\n  bash:\n    "touch *": ask\n')
    monkeypatch.setattr(managed_module, "AT_START", str(managed))
    allow = 'echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}\''
    ws = workspace(tmp_path, server, {"hooks": {"PreToolUse": hook(allow)}})  # headless: nobody to ask
    server.queue(*bash_then_text("touch made.txt"))
    with ws:
        await run(ws)
    assert not (ws.root / "made.txt").exists(), "only a person answers the administrator's ask"


async def test_a_subagent_stop_hook_hears_a_child_session_end(tmp_path, server):
    ws = workspace(tmp_path, server, {})
    log = ws.root / "children.jsonl"
    ws.close()
    ws = workspace(tmp_path, server, {"hooks": {"SubagentStop": hook(f"cat >> {log}; echo >> {log}", matcher=""),
                                                "Stop": hook(f"echo stop >> {log}", matcher="")}})
    task = {"description": "Survey", "prompt": "look around", "subagent_type": "explore"}
    server.queue(anthropic_stream({"tool": "task", "id": "toolu_1", "json": json.dumps(task)}, stop="tool_use"),
                 anthropic_stream({"text": "Nothing to see."}), anthropic_stream({"text": "The child found nothing."}))
    with ws:
        session, _ = await run(ws)
        [child] = ws.sessions.children(session.id)
    lines = log.read_text().splitlines()
    heard = [json.loads(line) for line in lines if line.startswith("{")]
    assert [h["hook_event_name"] for h in heard] == ["SubagentStop"] and heard[0]["session_id"] == child.id
    assert lines.count("stop") == 1, "the parent's own end is a Stop"


async def test_a_pre_compact_hook_says_what_the_summary_must_keep(tmp_path, server):
    from opencode_nb.session.models import CompactionPart

    keep = ('echo \'{"hookSpecificOutput": {"hookEventName": "PreCompact", '
            '"additionalContext": "Keep the names of the files changed."}}\'')
    ws = workspace(tmp_path, server, {"hooks": {"PreCompact": hook(keep, matcher="")}})
    server.queue(anthropic_stream({"text": "Listed."}), anthropic_stream({"text": "## Goal\nsummary"}))
    with ws:
        session, _ = await run(ws)
        part = CompactionPart(session_id=session.id, message_id="placeholder", auto=False)
        await asyncio.wait_for(ws.prompt(session.id, "", parts=[part]), 60)
    asked = server.received[-1].body["messages"][-1]
    assert "Keep the names of the files changed." in json.dumps(asked)
