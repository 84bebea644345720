"""The hub hands each event to the views of the session it belongs to, whatever the event carries, and paces
what reaches the front end without ever holding back how a run ended."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from opencode_nb.bus import Event
from opencode_nb.permission.events import PermissionAsked, PermissionReplied, PermissionRequest
from opencode_nb.provider.scripted import Scripted
from opencode_nb.question.events import QuestionAsked, QuestionInfo, QuestionReplied, QuestionRequest
from opencode_nb.session.events import (
    MessagePartUpdated,
    MessageUpdated,
    SessionCreated,
    SessionError,
    SessionIdle,
    SessionStatus,
    SessionUpdated,
    TodoUpdated,
)
from opencode_nb.session.models import Session, TextPart, UserMessage
from opencode_nb.views import SessionView, ViewHub
from opencode_nb.views.hub import session_of
from opencode_nb.workspace import Workspace

EVENTS = [
    MessagePartUpdated(part=TextPart(session_id="s", message_id="m", text="hi")),
    MessageUpdated(message=UserMessage(session_id="s", agent="build")),
    SessionCreated(session=Session(id="s", directory=".")),
    SessionUpdated(session=Session(id="s", directory=".")),
    SessionStatus(session_id="s", status="busy"),
    SessionIdle(session_id="s"),
    SessionError(session_id="s", error="boom"),
    TodoUpdated(session_id="s", todos=[]),
    PermissionAsked(request=PermissionRequest(id="p", session_id="s", agent="build", permission="bash", patterns=[])),
    PermissionReplied(session_id="s", request_id="p", reply="once"),
    QuestionAsked(request=QuestionRequest(id="q", session_id="s", questions=[QuestionInfo(question="Which?")])),
    QuestionReplied(session_id="s", request_id="q", answers=[["A"]]),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.type)
def test_every_event_of_a_session_is_routed_to_that_session(event):
    assert session_of(event) == "s"


def test_an_event_of_no_session_reaches_no_view():
    assert session_of(Event(type="workspace.closed")) is None


# ---------------------------------------------------------------------------------------------- pacing


def sent_values(sent: list[dict[str, Any]]) -> str:
    """Every widget value the front end has been sent so far, in order."""
    return "\n".join(str((m["data"] or {}).get("state", {}).get("value", "")) for m in sent if m["type"] == "comm_msg")


async def test_the_end_of_a_run_is_sent_at_once_not_at_the_next_beat(tmp_path, recording_comm):
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text("hello\n")
    ws = Workspace(tmp_path / "project", {"model": "scripted/test", "permission": {"read": "allow"}},
                   data_dir=tmp_path / "data", env={})
    ws.providers.register("scripted", Scripted([
        {"text": "Reading the notes.", "tool_calls": [{"name": "read", "input": {"path": "notes.txt"}}]},
        {"text": "The notes say hello."}]))
    hub = ViewHub(ws.bus, interval_s=3600.0)  # after the first flush, the next beat is an hour away
    session = ws.sessions.create(str(ws.directory))
    view = SessionView(ws, hub, session.id, floor="")
    view.start()
    await asyncio.sleep(0.01)  # the first flush: the view shows it is running
    assert hub.flushes == 1 and "running" in view.header.value
    await ws.prompt(session.id, "What do the notes say?")
    assert "The notes say hello." not in sent_values(recording_comm), "changes wait for the beat while it runs"

    view.finish("done")  # no await: whatever the end shows must already be on its way to the front end
    shown = sent_values(recording_comm)
    assert "The notes say hello." in shown and "ocnb-completed" in shown
    assert "done" in view.header.value and "done" in shown.rsplit("ocnb-header", 1)[-1]
    assert hub._handle is None, "no flush is left waiting for a beat"
    await ws.aclose()
