"""What a card shows is this run's: a run that continues a session says which, and a new run's card does not
start with the todo list an earlier run finished."""

from __future__ import annotations

from pathlib import Path

from opencode_nb import id as ids
from opencode_nb.views import SessionView, ViewHub, transcript_bundle

from .test_session import make_ws

TODOS = {"tool_calls": [{"name": "todowrite", "input": {"todos": [
    {"content": "Load the sales data", "status": "completed", "priority": "high"}]}}]}


def running_view(ws, hub: ViewHub, session_id: str) -> SessionView:
    """A prompt cell's view as the kernel makes it: built before the run, its floor set as the run starts."""
    view = SessionView(ws, hub, session_id, floor=ids.NOT_STARTED)
    view.floor = ids.ascending("message")
    view.start()
    hub.flush_all()
    return view


async def test_a_running_card_of_a_new_session_says_new_session(tmp_path: Path) -> None:
    ws = make_ws(tmp_path, [])
    hub = ViewHub(ws.bus)
    session = ws.sessions.create(str(ws.directory))
    view = running_view(ws, hub, session.id)
    assert "new session" in view.header.value and "continues" not in view.header.value
    await ws.aclose()


async def test_a_running_card_that_continues_a_session_names_the_session_it_continues(tmp_path: Path) -> None:
    ws = make_ws(tmp_path, [{"text": "The mean is 4.2."}])
    hub = ViewHub(ws.bus)
    session = ws.sessions.create(str(ws.directory))
    await ws.prompt(session.id, "Summarise the sales data")
    await ws.loop.titles.wait()
    view = running_view(ws, hub, session.id)
    assert "continues “Summarise the sales data”" in view.header.value, view.header.value
    assert "new session" not in view.header.value
    await ws.aclose()


async def test_a_new_runs_card_does_not_show_the_todo_list_an_earlier_run_finished(tmp_path: Path) -> None:
    ws = make_ws(tmp_path, [TODOS, {"text": "Loaded."}, {"text": "The median is 3."}])
    hub = ViewHub(ws.bus)
    session = ws.sessions.create(str(ws.directory))
    await ws.prompt(session.id, "load the data")
    view = running_view(ws, hub, session.id)
    floor = view.floor
    await ws.prompt(session.id, "and the median?")
    view.finish("done")
    assert "Load the sales data" not in view.todo.widget.value
    card = transcript_bundle(ws, session.id, since=floor, status="done")
    assert "Load the sales data" not in card["text/html"] and "Load the sales data" not in card["text/plain"]
    assert "The median is 3." in card["text/html"]
    whole = transcript_bundle(ws, session.id, status="done")
    assert "Load the sales data" in whole["text/html"], "the session's own transcript keeps its list"
    await ws.aclose()
