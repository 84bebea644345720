"""Subagents the model starts in the background, through the loop and the scripted provider: the task call
returns at once, task_status gives the answer later, task_cancel stops the child, a failure is a failure, and
the parent is told how each ended at its next step or prompt."""

import asyncio
import json

from .test_subtask import ByAgent, texts


def background(description, prompt, agent="explore"):
    return {"name": "task", "input": {"description": description, "prompt": prompt, "subagent_type": agent,
                                      "background": True}}


def status(task_id=None, wait=False, timeout=30):
    payload = {"wait": wait, "timeout": timeout}
    if task_id:
        payload["task_id"] = task_id
    return {"name": "task_status", "input": payload}


def outputs(h, tool):
    return [p.state.output if p.state.status == "completed" else p.state.error
            for p in h.tool_parts() if p.tool == tool]


async def test_a_background_task_returns_at_once_and_task_status_later_gives_its_answer(h):
    model = ByAgent(build=[{"tool_calls": [background("Survey", "List the modules.")]},
                           {"text": "Started; waiting."}],
                    explore=[{"sleep": 1.0, "text": "Two modules: a.py and b.py."}])
    h.model.respond = model
    h.ws.keep_background = True  # as a notebook does: the cell returns, the task goes on
    await h.prompt("survey in the background")
    [running] = h.ws.loop.subtasks.background.running()
    assert running.state == "running", "the parent's run ended while its child still works"
    [started_text] = outputs(h, "task")
    assert "in the background as task ses_" in started_text
    task_id = started_text.split("as task ")[1].split(".")[0]
    h.model.respond = ByAgent(build=[{"tool_calls": [status(task_id, wait=True)]}, {"text": "It found two."}])
    await h.prompt("what did it find?")
    assert "completed" in outputs(h, "task_status")[0] and "Two modules: a.py and b.py." in outputs(h, "task_status")[0]
    [child] = h.ws.sessions.children(h.session.id)
    assert child.id == task_id, "the task is a child session like any other"


async def test_the_parent_is_told_at_its_next_prompt_how_a_task_ended_while_it_was_idle(h):
    h.ws.keep_background = True
    h.model.respond = ByAgent(build=[{"tool_calls": [background("Survey", "look")]}, {"text": "Started."}],
                              explore=[{"sleep": 0.2, "text": "Found three files."}])
    await h.prompt("go")
    await asyncio.sleep(0.6)
    model = ByAgent(build=[{"text": "The survey found three files."}])
    h.model.respond = model
    await h.prompt("anything new?")
    told = "\n".join(texts(model.seen["build"][0]))
    assert "Background task ses_" in told and "completed" in told and "Found three files." in told
    model = ByAgent(build=[{"text": "Nothing else."}])
    h.model.respond = model
    await h.prompt("and now?")
    assert "\n".join(texts(model.seen["build"][0])).count("Found three files.") == 1, "told once"


async def test_task_cancel_stops_the_child_and_its_state_says_cancelled(h):
    h.ws.keep_background = True
    h.model.respond = ByAgent(build=[{"tool_calls": [background("Long job", "work a long time")]},
                                     {"text": "Started."}],
                              explore=[{"sleep": 30, "text": "never"}])
    await h.prompt("start it")
    task_id = outputs(h, "task")[0].split("as task ")[1].split(".")[0]
    h.model.respond = ByAgent(build=[{"tool_calls": [{"name": "task_cancel", "input": {"task_id": task_id}}]},
                                     {"tool_calls": [status(task_id, wait=True, timeout=5)]}, {"text": "Stopped."}])
    await h.prompt("stop it")
    assert "is being stopped" in outputs(h, "task_cancel")[0]
    assert "cancelled" in outputs(h, "task_status")[0] and "never" not in outputs(h, "task_status")[0]
    assert not h.ws.loop.subtasks.background.running()


async def test_a_failing_child_is_reported_as_failed_not_cancelled(h):
    h.model.respond = ByAgent(build=[{"tool_calls": [background("Broken", "x", agent="no-such-agent")]},
                                     {"text": "ok"}])
    await h.prompt("start a broken one")
    assert "Unknown agent type" in outputs(h, "task")[0], "an unknown agent is refused at the call"

    class Failing(ByAgent):
        async def __call__(self, request):
            if "You are explore" in "\n".join(request.system):
                raise RuntimeError("the model's server fell over")
            return await super().__call__(request)

    h.model.respond = Failing(build=[{"tool_calls": [background("Survey", "look")]},
                                     {"tool_calls": [status(wait=True, timeout=10)]}, {"text": "It failed."}])
    await h.prompt("try again")
    reported = outputs(h, "task_status")[-1]
    assert "failed" in reported and "cancelled" not in reported, reported


async def test_a_session_runs_at_most_its_limit_of_background_tasks(h):
    h.ws.keep_background = True
    h.ws.config.background_tasks = 2
    calls = [background(f"Job {i}", "work") for i in range(3)]
    h.model.respond = ByAgent(build=[{"tool_calls": calls}, {"text": "Two started."}],
                              explore=[{"sleep": 30, "text": "x"}] * 3)
    await h.prompt("start three")
    results = outputs(h, "task")
    assert sum("in the background as task" in r for r in results) == 2
    assert any("already has 2 background tasks running" in r for r in results), json.dumps(results)
    for task in h.ws.loop.subtasks.background.running():
        h.ws.loop.subtasks.background.cancel(task)


async def test_a_script_run_waits_for_its_background_tasks_and_the_agent_answers_with_them(h):
    model = ByAgent(build=[{"tool_calls": [background("Survey", "look")]}, {"text": "Started it."},
                           {"text": "The survey found five files."}],
                    explore=[{"sleep": 0.5, "text": "Five files."}])
    h.model.respond = model
    result = await h.prompt("survey, in the background")
    assert result.text == "The survey found five files."
    [task] = h.ws.loop.subtasks.background.of(h.session.id)
    assert task.state == "completed" and not h.ws.loop.subtasks.background.running()
    last = "\n".join(texts(model.seen["build"][-1]))
    assert "they were waited for (background_on_exit: wait)" in last and "Five files." in last


async def test_with_cancel_a_script_run_stops_its_background_tasks_and_says_so(h):
    h.ws.config.background_on_exit = "cancel"
    model = ByAgent(build=[{"tool_calls": [background("Long job", "work")]}, {"text": "Started it."},
                           {"text": "The job was stopped."}],
                    explore=[{"sleep": 30, "text": "never"}])
    h.model.respond = model
    result = await h.prompt("start the long job")
    assert result.text == "The job was stopped."
    [task] = h.ws.loop.subtasks.background.of(h.session.id)
    assert task.state == "cancelled" and "background_on_exit: cancel" in (task.error or "")
    assert "1 was stopped (background_on_exit: cancel)" in "\n".join(texts(model.seen["build"][-1]))
