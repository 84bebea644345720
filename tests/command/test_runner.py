import pytest

from opencode_nb.errors import NotFoundError
from opencode_nb.session.models import AssistantMessage, CompactionPart, SubtaskPart


def user_parts(h):
    return [p for m in h.ws.sessions.messages(h.session.id) if m.message.role == "user" for p in m.parts]


async def test_help_and_agents_answer_without_a_model(make):
    h = make()
    help_text = await h.ws.command(h.session.id, "help")
    assert "/init" in help_text and "/review" in help_text and "/compact" in help_text
    assert (await h.ws.command(h.session.id, "agents")).splitlines()[0].startswith("* build")
    assert h.model.requests == []


async def test_an_unknown_command_lists_the_available_ones(make):
    h = make()
    with pytest.raises(NotFoundError, match="available commands: /agents, /compact"):
        await h.ws.command(h.session.id, "deploy")


async def test_a_configured_command_renders_its_template_with_its_agent_and_model(make):
    h = make({"command": {"fix": {"template": "Fix $1 in $2", "agent": "plan", "description": "fix"}}})
    h.script({"text": "planned"})
    final = await h.ws.command(h.session.id, "fix", 'the-bug "stats.py"')
    assert final.agent == "plan"
    assert h.step_requests()[0].messages[0].content[0].text == "Fix the-bug in stats.py"


async def test_shell_substitutions_run_under_the_bash_rules(make):
    h = make({"command": {"status": {"template": "Files: !`ls *.py`"}}})
    h.script({"text": "ok"})
    await h.ws.command(h.session.id, "status")
    sent = h.step_requests()[0].messages[0].content[0].text
    assert sent.startswith("Files: check_stats.py\nstats.py")


async def test_a_shell_substitution_past_its_timeout_is_stopped_with_all_it_started(make, monkeypatch):
    import asyncio

    from opencode_nb.command import runner
    from opencode_nb.errors import ToolError

    monkeypatch.setattr(runner, "SHELL_TIMEOUT_S", 0.3)
    h = make({"command": {"slow": {"template": "!`(sleep 1; touch late.txt) & sleep 30`"}}})
    with pytest.raises(ToolError, match="did not finish within 0.3 s"):
        await asyncio.wait_for(h.ws.command(h.session.id, "slow"), 10)
    await asyncio.sleep(1.5)
    assert not (h.root / "late.txt").exists()  # the background job went down with the group, not only the shell
    assert h.model.requests == []


async def test_a_shell_substitution_the_rules_deny_is_refused(make):
    h = make({"permission": {"bash": {"ls *": "deny"}}, "command": {"status": {"template": "Files: !`ls`"}}})
    from opencode_nb.errors import DeniedError

    with pytest.raises(DeniedError):
        await h.ws.command(h.session.id, "status")
    assert h.model.requests == []


async def test_file_references_in_a_command_are_attached(make):
    h = make({"command": {"explain": {"template": "Explain @$1"}}})
    h.script({"text": "ok"})
    await h.ws.command(h.session.id, "explain", "stats.py")
    [attached] = [p for p in user_parts(h) if p.type == "file"]
    assert attached.filename == "stats.py"


async def test_a_subtask_command_runs_in_a_child_session_and_the_primary_reads_the_result(make):
    h = make({"command": {"survey": {"template": "Survey $ARGUMENTS", "agent": "explore"}}})

    def respond(request):
        system = "\n".join(request.system)
        if "You are explore" in system:
            return {"text": "Two modules found."}
        return {"text": "The survey found two modules."}

    h.model.respond = respond
    final = await h.ws.command(h.session.id, "survey", "the project")
    assert final.agent == "build" and final.finish == "stop"
    [child] = h.ws.sessions.children(h.session.id)
    assert [m.message.agent for m in h.ws.sessions.messages(child.id)] == ["explore", "explore"]
    [subtask] = [p for p in user_parts(h) if isinstance(p, SubtaskPart)]
    assert subtask.prompt == "Survey the project" and subtask.command == "survey"


async def test_review_is_a_subtask_of_the_general_agent(make):
    h = make()
    h.model.respond = lambda request: {"text": "looks fine"}
    await h.ws.command(h.session.id, "review", "HEAD~1")
    [child] = h.ws.sessions.children(h.session.id)
    first = h.ws.sessions.messages(child.id)[0]
    assert first.message.agent == "general" and "What to review: HEAD~1" in first.parts[0].text


async def test_compact_forces_a_summary(make):
    h = make()
    h.script({"text": "hello"}, {"text": "## Goal\nsay hello"})
    await h.prompt("hi")
    summary = await h.ws.command(h.session.id, "compact")
    assert isinstance(summary, AssistantMessage) and summary.summary
    assert any(isinstance(p, CompactionPart) and not p.auto for p in user_parts(h))


async def test_a_markdown_command_file_works_like_a_configured_one(make, tmp_path):
    h = make()
    (h.root / ".opencode" / "command").mkdir(parents=True)
    (h.root / ".opencode" / "command" / "hello.md").write_text("---\ndescription: greet\n---\nSay hello to $1\n")
    from opencode_nb import Workspace

    ws = Workspace(h.root, {"model": "scripted/demo"}, data_dir=tmp_path / "d2",
                   env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    try:
        assert ws.commands.get("hello").template == "Say hello to $1"
        assert "/hello" in ws.commands.help()
    finally:
        ws.close()
