"""The bash tool's permission requests as the agent loop makes them, through a real workspace."""

import asyncio

from opencode_nb import Workspace
from opencode_nb.provider import Scripted


def workspace(tmp_path, permission: dict) -> tuple[Workspace, Scripted, list]:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    model = Scripted()
    ws = Workspace(root, {"model": "scripted/demo", "permission": permission}, data_dir=tmp_path / "data",
                   env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)})
    ws.providers.register("scripted", model)
    events: list = []
    ws.bus.subscribe("*", events.append)
    return ws, model, events


async def test_an_unparseable_command_is_put_to_a_person_even_when_bash_is_allowed(tmp_path):
    ws, model, _ = workspace(tmp_path, {"bash": "allow"})
    model.turns.extend(Scripted([
        {"tool_calls": [{"name": "bash", "input": {"command": "echo 'unclosed"}}]},
        {"text": "done"},
    ]).turns)
    asked = []

    def person(event):
        asked.append(event.request)
        asyncio.get_running_loop().call_soon(ws.permissions.reply, event.request.id, "once")

    ws.bus.subscribe("permission.asked", person)
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 10)
    [request] = asked
    assert request.permission == "bash" and request.patterns[0] == "echo 'unclosed"
    assert "could not be parsed" in request.metadata["unparsed"]
    [part] = [p for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool"]
    assert part.state.status == "completed" and part.state.metadata["exit"] is not None
    ws.close()


async def test_a_parsed_command_the_rules_allow_runs_without_asking(tmp_path):
    ws, model, events = workspace(tmp_path, {"bash": "allow"})
    model.turns.extend(Scripted([
        {"tool_calls": [{"name": "bash", "input": {"command": "echo hi && echo there"}}]},
        {"text": "done"},
    ]).turns)
    session = ws.sessions.create(str(ws.root))
    await asyncio.wait_for(ws.prompt(session.id, "go"), 10)
    assert not [e for e in events if e.type == "permission.asked"]
    [part] = [p for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool"]
    assert part.state.output == "hi\nthere\n\n(exit code 0)"
    ws.close()


async def run_one(tmp_path, permission: dict, command: str):
    ws, model, _ = workspace(tmp_path, permission)
    model.turns.extend(Scripted([{"tool_calls": [{"name": "bash", "input": {"command": command}}]},
                                 {"text": "done"}]).turns)
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 10)
    [part] = [p for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool"]
    ws.close()
    return part.state


async def test_a_denial_tells_the_model_what_ran_and_not_to_try_another_spelling(tmp_path):
    state = await run_one(tmp_path, {"bash": {"*": "allow", "rm *": "deny"}}, "\"r\"'m' victim.txt")
    assert state.status == "error" and "The line runs `rm victim.txt`, which that rule denies" in state.error


async def test_a_refused_unchecked_line_tells_the_model_why_it_needed_a_person(tmp_path):
    state = await run_one(tmp_path, {"bash": {"*": "allow", "rm *": "deny"}}, "python3 -c 'print(1)'")
    assert state.status == "error" and "nobody to approve it" in state.error
    assert "runs code given on the command line, which the rules cannot check" in state.error


async def test_with_nothing_denied_an_interpreter_s_inline_code_runs(tmp_path):
    state = await run_one(tmp_path, {"bash": "allow"}, "python3 -c 'print(6 * 7)'")
    assert state.status == "completed" and state.output.startswith("42")


async def test_a_failing_command_is_a_result_the_model_reads_in_full_with_its_exit_code(tmp_path):
    ws, model, _ = workspace(tmp_path, {"bash": "allow"})
    model.turns.extend(Scripted([{"tool_calls": [{"name": "bash", "input": {"command": "echo broken; exit 2"}}]},
                                 {"text": "It failed."}]).turns)
    session = ws.sessions.create(str(ws.root))
    await asyncio.wait_for(ws.prompt(session.id, "go"), 10)
    [part] = [p for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool"]
    assert part.state.status == "completed", "the output is worth reading; views show it failed from the exit"
    assert (part.state.metadata["exit"], part.state.metadata["timed_out"]) == (2, False)
    last_step = [r for r in model.requests if r.purpose == "step"][-1]
    [result] = [block for m in last_step.messages if m.role == "tool" for block in m.content]
    assert result.output == "broken\n\n(exit code 2)" and not getattr(result, "is_error", False)
    ws.close()
