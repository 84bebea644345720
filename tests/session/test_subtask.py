"""Delegation to subagents in child sessions, through the loop and the scripted provider."""

import asyncio

from opencode_nb.provider.request import LLMRequest

MARKERS = {"explore": "You are explore", "general": "You are a general-purpose subagent",
           "plan": "You are the plan agent", "build": "You are the build agent"}


def agent_of(request: LLMRequest) -> str:
    system = "\n".join(request.system)
    return next(name for name, marker in MARKERS.items() if marker in system)


class ByAgent:
    """A scripted model whose turns are queued per agent, so parents and children can interleave."""

    def __init__(self, **turns):
        self.turns = {name: list(queue) for name, queue in turns.items()}
        self.seen: dict[str, list[LLMRequest]] = {}

    async def __call__(self, request):
        name = agent_of(request)
        self.seen.setdefault(name, []).append(request)
        turn = self.turns[name].pop(0)
        if isinstance(turn, dict) and "sleep" in turn:
            await asyncio.sleep(turn.pop("sleep"))
        return turn


def task(description, prompt, agent="explore", task_id=None):
    payload = {"description": description, "prompt": prompt, "subagent_type": agent}
    if task_id:
        payload["task_id"] = task_id
    return {"name": "task", "input": payload}


def texts(request):
    return [b.text for m in request.messages for b in m.content if b.type == "text"]


async def test_a_child_sees_only_its_task_prompt_and_its_answer_returns_to_the_parent(h):
    delegate = {"text": "Let me delegate.", "tool_calls": [task("Survey the project", "List the modules.")]}
    model = ByAgent(build=[delegate, {"text": "The survey says: two modules."}],
                    explore=[{"tool_calls": [{"name": "glob", "input": {"pattern": "*.py"}}]},
                             {"text": "Two modules: stats.py and check_stats.py."}])
    h.model.respond = model
    final = await h.prompt("Secret parent context: the budget is 42. Please survey.")
    assert final.finish == "stop"
    first_child_request = model.seen["explore"][0]
    assert texts(first_child_request) == ["List the modules."]
    assert all("budget is 42" not in t for r in model.seen["explore"] for t in texts(r))
    [call] = [p for p in h.tool_parts() if p.tool == "task"]
    assert call.state.output.startswith("Two modules: stats.py and check_stats.py.")
    child_id = call.state.metadata["session_id"]
    assert f"session_id: {child_id}" in call.state.output
    child = h.ws.sessions.get(child_id)
    assert child.parent_id == h.session.id and child.title == "Survey the project (@explore subagent)"
    assert call.state.metadata["tools"] == [
        {"tool": "glob", "status": "completed", "title": ".", "input": {"pattern": "*.py"}}]


async def test_several_task_calls_run_concurrently_in_their_own_sessions(h):
    model = ByAgent(build=[{"tool_calls": [task("One", "first"), task("Two", "second")]}, {"text": "Both done."}],
                    explore=[{"sleep": 0.3, "text": "answer A"}, {"sleep": 0.3, "text": "answer B"}])
    h.model.respond = model
    await h.prompt("two surveys")
    outputs = sorted(p.state.output.split("\n")[0] for p in h.tool_parts() if p.tool == "task")
    assert outputs == ["answer A", "answer B"]
    children = h.ws.sessions.children(h.session.id)
    assert len(children) == 2
    answers = [m.message for c in children for m in h.ws.sessions.messages(c.id) if m.message.role == "assistant"]
    spans = [(m.created_at, m.completed_at) for m in answers]
    assert all(end is not None for _, end in spans)
    assert max(start for start, _ in spans) < min(end for _, end in spans if end is not None), \
        "each child was already answering before the other had finished: they ran at the same time"


async def test_a_task_can_be_resumed_with_its_id(h):
    model = ByAgent(build=[{"tool_calls": [task("Look", "find the mean")]}, {"text": "ok"}],
                    explore=[{"text": "It is in stats.py."}, {"text": "It divides by n - 1."}])
    h.model.respond = model
    await h.prompt("look")
    child_id = h.tool_parts()[0].state.metadata["session_id"]
    model.turns["build"] = [{"tool_calls": [task("Look closer", "what does it divide by?", task_id=child_id)]},
                            {"text": "done"}]
    await h.prompt("closer")
    resumed = model.seen["explore"][1]
    assert texts(resumed) == ["find the mean", "It is in stats.py.", "what does it divide by?"]
    assert len(h.ws.sessions.children(h.session.id)) == 1


async def test_subagents_cannot_delegate_further_unless_their_rules_say_so(make):
    h = make()
    model = ByAgent(build=[{"tool_calls": [task("Dig", "dig", agent="general")]}, {"text": "ok"}],
                    general=[{"text": "dug"}])
    h.model.respond = model
    await h.prompt("go")
    assert "task" not in [t.name for t in model.seen["general"][0].tools]
    assert "todowrite" not in [t.name for t in model.seen["general"][0].tools]
    h2 = make({"agent": {"general": {"permission": {"task": {"*": "deny", "explore": "allow"}}}}})
    model2 = ByAgent(build=[{"tool_calls": [task("Dig", "dig", agent="general")]}, {"text": "ok"}],
                     general=[{"text": "dug"}])
    h2.model.respond = model2
    await h2.prompt("go")
    [spec] = [t for t in model2.seen["general"][0].tools if t.name == "task"]
    assert "- explore:" in spec.description and "- general:" not in spec.description


async def test_the_task_description_lists_only_the_subagents_the_caller_may_use(make):
    h = make({"agent": {"build": {"permission": {"task": {"*": "deny", "explore": "allow"}}}}})
    h.script({"text": "ok"})
    await h.prompt("hi")
    [spec] = [t for t in h.step_requests()[0].tools if t.name == "task"]
    listed = spec.description.split("Available agent types:")[1].strip().splitlines()
    assert [line.split(":")[0] for line in listed] == ["- explore"]


async def test_asking_for_a_task_uses_the_task_permission_with_the_agent_as_pattern(make):
    h = make({"permission": {"task": {"general": "deny"}}})
    h.script({"tool_calls": [task("Dig", "dig", agent="general")]}, {"text": "ok"})
    await h.prompt("go")
    assert "prevents you from using this specific tool call" in h.tool_parts()[0].state.error
    assert h.ws.sessions.children(h.session.id) == []


async def test_aborting_the_parent_aborts_its_children(h):
    model = ByAgent(build=[{"tool_calls": [task("Slow", "take your time")]}],
                    explore=[{"tool_calls": [{"name": "bash", "input": {"command": "sleep 20"}}]}])
    h.model.respond = model
    run = asyncio.create_task(h.prompt("go"))
    while not any(p.tool == "bash" and p.state.status == "running"
                  for c in h.ws.sessions.children(h.session.id)
                  for m in h.ws.sessions.messages(c.id) for p in m.parts if p.type == "tool"):
        await asyncio.sleep(0.02)
    h.ws.abort(h.session.id)
    final = await asyncio.wait_for(run, 2)
    assert final.finish == "aborted"
    [child] = h.ws.sessions.children(h.session.id)
    child_final = h.ws.sessions.messages(child.id)[-1].message
    assert child_final.finish == "aborted"
    assert not h.ws.loop.busy(child.id)


async def test_a_child_failure_is_a_tool_error_the_parent_reads(h):
    model = ByAgent(build=[{"tool_calls": [task("Fail", "x")]}, {"text": "It failed; I'll do it myself."}],
                    explore=[{"error": {"status": 401, "retryable": False, "kind": "auth", "message": "bad key"}}])
    h.model.respond = model
    final = await h.prompt("go")
    assert final.finish == "stop" and "Task failed" in h.tool_parts()[0].state.error


async def test_an_unknown_subagent_is_an_error_naming_the_valid_ones(h):
    h.script({"tool_calls": [task("x", "y", agent="wizard")]}, {"text": "ok"})
    await h.prompt("go")
    assert "Unknown agent type: wizard" in h.tool_parts()[0].state.error


async def test_an_agent_mention_runs_the_subagent_directly_without_asking(make):
    h = make({"permission": {"task": "ask"}})
    asked = []
    h.ws.bus.subscribe("permission.asked", asked.append)
    model = ByAgent(explore=[{"text": "Found stats.py."}], build=[{"text": "Explore found stats.py."}])
    h.model.respond = model
    final = await h.prompt("@explore where is the mean computed?")
    assert asked == [] and final.finish == "stop"
    assert texts(model.seen["explore"][0]) == ["@explore where is the mean computed?"]
    [call] = [p for p in h.tool_parts() if p.tool == "task"]
    assert call.state.output.startswith("Found stats.py.")
    assert any("Found stats.py." in r.output for m in model.seen["build"][0].messages if m.role == "tool"
               for r in m.content)


async def test_a_file_mention_attaches_the_file(h):
    h.script({"text": "It has a header."})
    await h.prompt("What is in @readings.csv?")
    [attached] = h.parts("file")
    assert attached.filename == "readings.csv" and attached.mime == "text/plain"
    sent = texts(h.step_requests()[0])
    assert any(t.startswith("Contents of readings.csv:\ndate,temp_c") for t in sent)


async def test_plan_mode_is_entered_and_left_with_the_persons_consent(h):
    answers = iter([["Yes"], ["Yes"]])
    h.ws.bus.subscribe("question.asked", lambda e: asyncio.get_running_loop().call_soon(
        h.ws.questions.reply, e.request.id, [next(answers)]))
    plan_file = None

    def respond(request):
        nonlocal plan_file
        agent = agent_of(request)
        count = len([r for r in h.model.requests if r.purpose == "step" and agent_of(r) == agent])
        if agent == "build" and count == 1:
            return {"tool_calls": [{"name": "plan_enter", "input": {}}]}
        if agent == "plan" and count == 1:
            plan_file = next(t for t in texts(request) if "plans/" in t).split("write a step-by-step plan to ")[1]
            plan_file = plan_file.split(";")[0]
            return {"tool_calls": [{"name": "write", "input": {"path": plan_file, "content": "1. fix mean\n"}}]}
        if agent == "plan":
            return {"tool_calls": [{"name": "plan_exit", "input": {}}]}
        return {"text": "Executing the plan."}

    h.model.respond = respond
    final = await h.prompt("Big change, plan it first")
    assert final.agent == "build" and final.finish == "stop"
    users = [m.message for m in h.ws.sessions.messages(h.session.id) if m.message.role == "user"]
    assert [(u.agent, u.synthetic) for u in users] == [("build", False), ("plan", True), ("build", True)]
    assert (h.root / plan_file).read_text() == "1. fix mean\n"
    assert plan_file.startswith(".opencode/plans/") and plan_file.endswith(".md")
    assert h.ws.sessions.current_agent(h.session.id) == "build"


async def test_declining_plan_mode_is_a_result_the_model_reads(h):
    h.ws.bus.subscribe("question.asked", lambda e: asyncio.get_running_loop().call_soon(
        h.ws.questions.reply, e.request.id, [["No"]]))
    h.script({"tool_calls": [{"name": "plan_enter", "input": {}}]}, {"text": "Staying in build mode."})
    final = await h.prompt("go")
    assert final.agent == "build" and "chose not to switch" in h.tool_parts()[0].state.error


async def test_a_child_inherits_the_parent_sessions_denies(h):
    from opencode_nb.permission import Rule

    h.ws.sessions.update(h.ws.sessions.get(h.session.id),
                         permission=[Rule(permission="grep", pattern="*", action="deny")])
    model = ByAgent(build=[{"tool_calls": [task("Look", "grep for mean")]}, {"text": "ok"}],
                    explore=[{"text": "no grep for me"}])
    h.model.respond = model
    await h.prompt("go")
    assert "grep" not in [t.name for t in model.seen["explore"][0].tools]
    assert "glob" in [t.name for t in model.seen["explore"][0].tools]


async def test_an_always_grant_inside_a_child_does_not_reach_the_parent(make):
    h = make({"permission": {"webfetch": "ask"}})
    asked = []

    def on_ask(event):
        asked.append(event.request)
        reply = "always" if event.request.agent == "explore" else "reject"
        asyncio.get_running_loop().call_soon(h.ws.permissions.reply, event.request.id, reply)

    h.ws.bus.subscribe("permission.asked", on_ask)
    fetch = {"name": "webfetch", "input": {"url": "http://127.0.0.1:9/doc"}}
    model = ByAgent(build=[{"tool_calls": [task("Fetch", "fetch the doc")]}, {"tool_calls": [fetch]},
                           {"text": "done"}],
                    explore=[{"tool_calls": [fetch]}, {"text": "fetched"}])
    h.model.respond = model
    await h.prompt("go")
    assert [(r.agent, r.permission) for r in asked] == [("explore", "webfetch"), ("build", "webfetch")]


async def test_declining_to_leave_plan_mode_keeps_planning(h):
    h.ws.bus.subscribe("question.asked", lambda e: asyncio.get_running_loop().call_soon(
        h.ws.questions.reply, e.request.id, [["No"]]))
    h.script({"tool_calls": [{"name": "plan_exit", "input": {}}]}, {"text": "What should change in the plan?"})
    final = await h.prompt("plan it", agent="plan")
    assert final.agent == "plan" and "keep planning" in h.tool_parts()[0].state.error
    assert [m.message.agent for m in h.ws.sessions.messages(h.session.id) if m.message.role == "user"] == ["plan"]


NO_KEY_EXPLORE = {"agent": {"explore": {"model": "anthropic/claude-sonnet-4-5"}}}
"""A subagent on a provider with no API key here: its run cannot even start."""


async def test_a_task_whose_subagent_cannot_start_fails_cleanly_and_keeps_its_child_session(make, caplog):
    h = make(NO_KEY_EXPLORE)
    h.script({"tool_calls": [task("Survey", "List the modules.")]}, {"text": "I will look myself."})
    final = await h.prompt("go")
    assert final.finish == "stop"
    [call] = h.tool_parts()
    [child] = h.ws.sessions.children(h.session.id)
    assert call.state.status == "error"
    assert call.state.error.startswith("Task failed: No API key for anthropic")
    assert call.state.metadata["session_id"] == child.id, "the transcript still finds the child"
    assert not [r for r in caplog.records if r.levelname == "ERROR"], "an expected failure, not a bug"


async def test_a_mentioned_subagent_that_cannot_start_ends_its_task_as_an_error_the_primary_reads(make):
    h = make(NO_KEY_EXPLORE)
    h.script({"text": "Explore could not run; the mean is in stats.py."})
    final = await h.prompt("@explore where is the mean computed?")
    [call] = [p for p in h.tool_parts() if p.tool == "task"]
    assert call.state.status == "error" and "No API key for anthropic" in call.state.error
    assert call.state.metadata["session_id"] == h.ws.sessions.children(h.session.id)[0].id
    assert final.finish == "stop" and final.error is None
    [request] = h.step_requests()
    assert any("No API key for anthropic" in str(block) for m in request.messages for block in m.content)


async def test_the_model_reads_how_to_continue_a_task_and_people_read_only_the_answer(h):
    from opencode_nb.tool.task import task_answer

    h.model.respond = ByAgent(build=[{"tool_calls": [task("Look", "find the mean")]}, {"text": "ok"}],
                              explore=[{"text": "It is in stats.py."}])
    await h.prompt("go")
    [call] = h.tool_parts()
    child_id = call.state.metadata["session_id"]
    assert f"<task_metadata>\nsession_id: {child_id}" in call.state.output
    assert task_answer(call.state.output) == "It is in stats.py."


async def test_a_bug_in_a_mentioned_subtask_ends_its_call_as_an_error_and_is_logged(h, monkeypatch, caplog):
    async def broken(**_):
        raise RuntimeError("boom")

    monkeypatch.setattr(h.ws.loop.subtasks, "run", broken)
    h.script({"text": "Explore broke; I will look myself."})
    final = await h.prompt("@explore where is the mean computed?")
    [call] = [p for p in h.tool_parts() if p.tool == "task"]
    assert call.state.status == "error" and call.state.error == "Task failed: RuntimeError: boom"
    assert final.finish == "stop"
    assert any(r.levelname == "ERROR" and "the explore subtask failed" in r.getMessage() for r in caplog.records)
