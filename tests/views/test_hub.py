"""The hub hands each event to the views of the session it belongs to, whatever the event carries."""

from __future__ import annotations

import pytest

from opencode_nb.bus import Event
from opencode_nb.permission.events import PermissionAsked, PermissionReplied, PermissionRequest
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
from opencode_nb.views.hub import session_of

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
