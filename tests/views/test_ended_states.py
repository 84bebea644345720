"""A finished run shows the state it ended in: its header, its todo items, its children, and for a run a
refusal ended, a closing sentence, in the live view and in the saved transcript alike."""

from __future__ import annotations

import asyncio

from opencode_nb.errors import REJECTED
from opencode_nb.kernel.ending import status_of
from opencode_nb.question.service import DISMISSED
from opencode_nb.session.models import ToolErrored, ToolPart
from opencode_nb.values import Todo
from opencode_nb.views import transcript_bundle
from opencode_nb.views.colors import HUES
from opencode_nb.views.run_frame import ended_note, header_html, inline_markdown, todo_html, todo_text

from .conftest import click
from .test_session import buttons, html_of, wait_for, watched

TODOS = [Todo(content="Survey the project", status="completed"), Todo(content="Fix `mean()`", status="in_progress"),
         Todo(content="Run the **self-check**", status="pending")]


def header(status: str) -> str:
    return header_html(agent="build", model="scripted/test", title="t", status=status, elapsed_s=1.0, tokens=0,
                       cost=0.0)


def refused(tool: str, error: str) -> ToolPart:
    return ToolPart(session_id="s", message_id="m", call_id="c", tool=tool,
                    state=ToolErrored(input={}, error=error, started_at=0.0))


# ---------------------------------------------------------------------------------------------- pure


def test_a_rejected_run_reads_rejected_in_red_like_a_stop_never_done_in_green():
    html = header("rejected")
    assert ">rejected</span>" in html and HUES["error"] in html and HUES["completed"] not in html
    assert HUES["completed"] in header("done") and HUES["running"] in header("running")


def test_while_a_run_works_its_item_in_progress_spins_and_once_it_ended_it_says_how_it_was_left():
    assert "◐" in todo_html(TODOS)
    for ended, said in (("done", "unfinished when the run ended"), ("error", "interrupted by an error"),
                        ("stopped", "stopped here"), ("rejected", "ended by a refusal")):
        html = todo_html(TODOS, ended=ended)
        assert "◐" not in html and said in html
        assert html.count("☐") == 2 and "☑" in html, "finished and pending items keep their marks"
        text = todo_text(TODOS, ended=ended)
        assert "[~]" not in text and f"[ ] Fix `mean()` ({said})" in text
    assert "[~] Fix `mean()`" in todo_text(TODOS)


def test_todo_items_render_their_markdown_inline():
    html = todo_html(TODOS)
    assert "Fix <code>mean()</code>" in html and "Run the <strong>self-check</strong>" in html
    assert "<p>" not in html
    assert inline_markdown("1. a numbered line") == "1. a numbered line", "no list is made of one item"
    unsafe = inline_markdown("`a<b` and <img src=x onerror=alert(1)>")
    assert "<script>" not in unsafe and "<code>a&lt;b</code>" in unsafe, "raw HTML is dropped, as in any model text"


def test_only_a_run_a_refusal_ended_gets_a_closing_sentence_and_it_says_who_refused_what():
    assert all(ended_note(status) == "" for status in ("done", "error", "stopped", "idle"))
    plain = ended_note("rejected", refused("bash", REJECTED))
    assert plain.startswith("Stopped by your reply: you rejected the bash call")
    assert "Reject with feedback" in plain
    assert "dismissed the question" in ended_note("rejected", refused("question", DISMISSED))
    timeout = ended_note("rejected", refused("edit", "Nobody answered the permission request within 300 s, so "
                                                     "the call was not made."))
    assert "your reply" not in timeout and "Nobody answered" in timeout


# ---------------------------------------------------------------------------------------------- views

SURVEY_THEN_ASK = [
    {"text": "Working.", "tool_calls": [
        {"name": "todowrite", "input": {"todos": [{"content": "Look around", "status": "in_progress",
                                                   "priority": "high"}]}},
        {"name": "bash", "input": {"command": "echo hi", "description": "Say hi"}}]},
    {"text": "Never reached."}]


async def test_a_plain_reject_ends_the_live_view_and_the_transcript_as_rejected_with_a_closing_sentence(tmp_path):
    ws, _hub, session, view = watched(tmp_path, SURVEY_THEN_ASK)
    view.start()
    run = asyncio.ensure_future(ws.prompt(session.id, "look around"))
    click((await wait_for(lambda: buttons(view.widget, "Reject")))[0])
    result = await asyncio.wait_for(run, 5)
    status = status_of(result, stop_requested=False)
    assert status == "rejected"
    view.finish(status)
    live = html_of(view.widget)
    assert ">rejected</span>" in live and "Stopped by your reply: you rejected the bash call" in live
    assert "◐" not in live and "ended by a refusal" in live
    bundle = transcript_bundle(ws, session.id, status=status)
    assert ">rejected</span>" in bundle["text/html"] and "Stopped by your reply" in bundle["text/html"]
    assert "◐" not in bundle["text/html"]
    assert " · rejected · " in bundle["text/plain"].splitlines()[0]
    assert bundle["text/plain"].rstrip().endswith("press “Reject with feedback”.")
    assert "[ ] Look around (ended by a refusal)" in bundle["text/plain"]
    await ws.aclose()


async def test_a_run_that_finished_keeps_no_closing_sentence_and_its_open_item_is_left_not_spinning(tmp_path):
    turns = [{"tool_calls": [{"name": "todowrite", "input": {"todos": [
        {"content": "Survey", "status": "in_progress", "priority": "high"}]}}]}, {"text": "I stop here."}]
    ws, hub, session, view = watched(tmp_path, turns)
    view.start()
    await ws.prompt(session.id, "go")
    hub.flush_all()
    assert "◐" in html_of(view.todo.widget), "the item spins while the run is on"
    view.finish("done")
    assert "◐" not in html_of(view.widget) and "unfinished when the run ended" in html_of(view.widget)
    assert "Stopped by your reply" not in html_of(view.widget)
    assert "ocnb-ended" not in transcript_bundle(ws, session.id, status="done")["text/html"]
    await ws.aclose()


async def test_after_a_child_failed_neither_the_childs_section_nor_the_parents_todo_says_running(tmp_path):
    def respond(request):
        if request.messages[0].content[0].text == "look":  # the child
            return {"error": {"message": "the model is overloaded", "status": 400}}
        if len(request.messages) > 1:
            return {"text": "The survey could not run, so I stop here."}
        return {"tool_calls": [
            {"name": "todowrite", "input": {"todos": [{"content": "Survey the project", "status": "in_progress",
                                                       "priority": "high"}]}},
            {"name": "task", "input": {"description": "Survey", "prompt": "look", "subagent_type": "explore"}}]}

    ws, _hub, session, view = watched(tmp_path, [], respond=respond, permission={"*": "allow"})
    view.start()
    result = await ws.prompt(session.id, "survey")
    view.finish(status_of(result, stop_requested=False))
    child = next(iter(view.children.values()))
    assert child.widget.get_title(0).endswith("0 tools, failed")
    assert child.session.status == "error" and not child.session.running
    live = html_of(view.widget)
    assert "◐" not in live and "ocnb-todo-left" in live and "— unfinished when the run ended" in live
    saved = transcript_bundle(ws, session.id, status="done")
    assert "◐" not in saved["text/html"] and "[~]" not in saved["text/plain"]
    assert "0 tools, failed" in saved["text/plain"]
    await ws.aclose()
