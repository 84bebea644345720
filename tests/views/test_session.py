"""The live session view: prompts answered by clicks (from any thread), pacing, children, transcript."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pytest

from opencode_nb.provider.scripted import Scripted
from opencode_nb.views import SessionView, ViewHub, transcript_bundle
from opencode_nb.views.records import AskRecorder
from opencode_nb.workspace import Workspace

from .conftest import click


def make_ws(tmp_path: Path, turns: list[dict[str, Any]], permission: Any = None) -> Workspace:
    (tmp_path / "project").mkdir(exist_ok=True)
    ws = Workspace(tmp_path / "project", {"model": "scripted/test", "permission": permission or {"bash": "ask"}},
                   data_dir=tmp_path / "data", env={})
    ws.providers.register("scripted", Scripted(turns))
    return ws


def watched(tmp_path: Path, turns: list[dict[str, Any]], *, respond: Any = None, permission: Any = None,
            **view_options: Any):
    """A workspace replaying `turns` (or asking `respond`), a hub and a view of a new session:
    (ws, hub, session, view)."""
    ws = make_ws(tmp_path, turns, permission)
    if respond is not None:
        ws.providers.register("scripted", Scripted(respond=respond))
    hub = ViewHub(ws.bus)
    session = ws.sessions.create(str(ws.directory))
    return ws, hub, session, SessionView(ws, hub, session.id, floor="", **view_options)


def buttons(widget: widgets.Widget, description: str) -> list[widgets.Button]:
    found = []
    stack = [widget]
    while stack:
        w = stack.pop()
        if isinstance(w, widgets.Button) and w.description == description:
            found.append(w)
        stack.extend(getattr(w, "children", ()) or ())
    return found


def html_of(widget: widgets.Widget) -> str:
    """All the HTML a widget tree shows, in order."""
    own = widget.value if isinstance(widget, widgets.HTML) else ""
    return own + "".join(html_of(child) for child in getattr(widget, "children", ()) or ())


async def wait_for(predicate: Any, timeout: float = 5.0) -> Any:
    for _ in range(int(timeout / 0.01)):
        value = predicate()
        if value:
            return value
        await asyncio.sleep(0.01)
    raise TimeoutError("condition not met")


BASH = [{"text": "Checking.", "tool_calls": [{"name": "bash", "input": {"command": "echo hi", "description": "hi"}}]},
        {"text": "All done."}]


@pytest.mark.parametrize("thread", [False, True], ids=["loop-thread", "other-thread"])
async def test_allow_once_clicked_on_any_thread_lets_the_tool_run(tmp_path, thread):
    ws, hub, session, view = watched(tmp_path, BASH)
    view.start()
    run = asyncio.ensure_future(ws.prompt(session.id, "say hi"))
    button = await wait_for(lambda: buttons(view.widget, "Allow once"))
    card = next(iter(view.cards.values()))
    assert "waiting for your answer" in card.html.value, "the card says it waits for the person"
    if thread:
        t = threading.Thread(target=click, args=(button[0],))
        t.start()
        t.join()
    else:
        click(button[0])
    final = await asyncio.wait_for(run, 5)
    assert final.error is None
    hub.flush_all()
    assert not buttons(view.widget, "Allow once"), "the prompt collapses to a record once answered"
    assert "waiting for your answer" not in card.html.value and "✓" in card.html.value
    html = html_of(view.widget)
    assert "All done." in html
    await ws.aclose()


async def test_parallel_asks_each_get_their_own_prompt(tmp_path):
    turns = [{"tool_calls": [{"name": "bash", "input": {"command": "echo one", "description": "one"}},
                             {"name": "bash", "input": {"command": "echo two", "description": "two"}}]},
             {"text": "Both ran."}]
    ws, hub, session, view = watched(tmp_path, turns)
    run = asyncio.ensure_future(ws.prompt(session.id, "run both"))
    allows = await wait_for(lambda: len(buttons(view.widget, "Allow once")) == 2 and buttons(view.widget, "Allow once"))
    assert {p.request.patterns[0] for p in view._prompts.values()} == {"echo one", "echo two"}
    click(allows[0])
    await wait_for(lambda: len(ws.permissions.pending()) == 1)
    hub.flush_all()
    assert len(buttons(view.widget, "Allow once")) == 1, "the other prompt still waits"
    click(buttons(view.widget, "Allow once")[0])
    final = await asyncio.wait_for(run, 5)
    assert final.error is None
    await ws.aclose()


async def test_reject_with_feedback_sends_the_text_to_the_model(tmp_path):
    ws, _hub, session, view = watched(tmp_path, BASH)
    run = asyncio.ensure_future(ws.prompt(session.id, "say hi"))
    await wait_for(lambda: buttons(view.widget, "Reject with feedback"))
    prompt = next(iter(view._prompts.values()))
    prompt.feedback.value = "not now"
    click(prompt.send_feedback)
    await asyncio.wait_for(run, 5)
    tool = next(p for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool")
    assert tool.state.status == "error" and "not now" in tool.state.error
    await ws.aclose()


async def test_a_double_click_answers_once_and_is_otherwise_ignored(tmp_path):
    ws, _hub, session, view = watched(tmp_path, BASH)
    replies = []
    ws.bus.subscribe("permission.replied", replies.append)
    run = asyncio.ensure_future(ws.prompt(session.id, "say hi"))
    button = (await wait_for(lambda: buttons(view.widget, "Allow once")))[0]
    click(button)
    click(button)
    await asyncio.wait_for(run, 5)
    assert len(replies) == 1
    await ws.aclose()


async def test_question_buttons_answer_the_question_tool(tmp_path):
    turns = [{"tool_calls": [{"name": "question", "input": {"questions": [
        {"question": "Which format?", "header": "Format", "options": [{"label": "CSV"}, {"label": "Parquet"}]}]}}]},
        {"text": "Parquet it is."}]
    ws, _hub, session, view = watched(tmp_path, turns)
    run = asyncio.ensure_future(ws.prompt(session.id, "export the data"))
    click((await wait_for(lambda: buttons(view.widget, "Parquet")))[0])
    await asyncio.wait_for(run, 5)
    tool = next(p for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool")
    assert tool.state.status == "completed" and "Parquet" in tool.state.output
    await ws.aclose()


async def test_streaming_text_is_coalesced_into_few_widget_updates(tmp_path, recording_comm):
    text = "word " * 4000
    ws, hub, session, view = watched(tmp_path, [{"text": text}])
    view.start()
    deltas = []
    ws.bus.subscribe("message.part.updated", lambda e: e.delta and deltas.append(e.delta))
    recording_comm.clear()
    await ws.prompt(session.id, "talk")
    hub.flush_all()
    updates = [m for m in recording_comm if m["type"] == "comm_msg" and "value" in (m["data"] or {}).get("state", {})]
    assert len(deltas) > 100
    assert hub.flushes < len(deltas) / 10, "many deltas share one flush"
    assert len(updates) <= hub.flushes * 3
    assert html_of(view.body.children[-1]).count("word") == 4000
    await ws.aclose()


async def test_a_task_call_shows_the_child_session_collapsed_inside_its_card(tmp_path):
    def respond(request):
        system = "\n".join(request.system)
        done = len(request.messages) > 1  # a tool result came back
        if "You are explore" in system:
            return {"text": "The project has one file."} if done else \
                {"tool_calls": [{"name": "glob", "input": {"pattern": "*"}}]}
        return {"text": "Surveyed."} if done else {"tool_calls": [{"name": "task", "input": {
            "description": "Survey", "prompt": "look around", "subagent_type": "explore"}}]}

    ws, hub, session, view = watched(tmp_path, [], respond=respond)
    recorder = AskRecorder(ws.bus, session.id)
    await ws.prompt(session.id, "survey")
    hub.flush_all()
    assert len(view.children) == 1
    child = next(iter(view.children.values()))
    assert child.widget.selected_index is None, "collapsed by default"
    assert child.widget.get_title(0).startswith("@explore — Survey · 1 tool, done")
    child_html = html_of(child.session.widget)
    assert "glob" in child_html and "The project has one file." in child_html
    bundle = transcript_bundle(ws, session.id, records=recorder.records)
    assert "<details class=\"ocnb-child\"" in bundle["text/html"] and "@explore — Survey" in bundle["text/plain"]
    await ws.aclose()


async def test_an_ask_inside_a_collapsed_child_opens_it_and_is_answered_there(tmp_path):
    def respond(request):
        done = len(request.messages) > 1
        if "You are explore" in "\n".join(request.system):
            return {"text": "Found it."} if done else {"tool_calls": [{"name": "glob", "input": {"pattern": "*"}}]}
        return {"text": "Thanks."} if done else {"tool_calls": [{"name": "task", "input": {
            "description": "Look", "prompt": "look", "subagent_type": "explore"}}]}

    ws, _hub, session, view = watched(tmp_path, [], respond=respond, permission={"glob": "ask"})
    run = asyncio.ensure_future(ws.prompt(session.id, "look"))
    allow = await wait_for(lambda: buttons(view.widget, "Allow once"))
    child = next(iter(view.children.values()))
    assert child.widget.selected_index == 0, "the section opened to show its question"
    assert buttons(child.session.widget, "Allow once") == allow
    click(allow[0])
    final = await asyncio.wait_for(run, 5)
    assert final.error is None
    await ws.aclose()


async def test_the_transcript_records_policy_decisions_with_their_reason(tmp_path):
    ws = make_ws(tmp_path, BASH)
    ws.permissions.policy = lambda request: "deny"
    session = ws.sessions.create(str(ws.directory))
    recorder = AskRecorder(ws.bus, session.id)
    await ws.prompt(session.id, "say hi")
    bundle = transcript_bundle(ws, session.id, records=recorder.records)
    assert "refused by policy: nobody is present to ask" in bundle["text/html"]
    assert "rejected (refused by policy" in bundle["text/plain"]
    assert "All done." in bundle["text/plain"], "the model carried on"
    await ws.aclose()


async def test_stop_button_calls_back_from_any_thread(tmp_path):
    stopped = asyncio.Event()
    ws, _, _, view = watched(tmp_path, BASH, on_stop=stopped.set)
    view.start()  # the view now knows the loop it runs on
    t = threading.Thread(target=click, args=(view.stop_button,))
    t.start()
    t.join()
    await asyncio.wait_for(stopped.wait(), 2)
    await ws.aclose()
