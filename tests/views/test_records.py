"""The ask recorder keeps each answered ask of a session and of the children it starts, for the transcript."""

from __future__ import annotations

from opencode_nb.bus import Bus
from opencode_nb.permission.events import PermissionAsked, PermissionReplied, PermissionRequest, ToolRef
from opencode_nb.question.events import QuestionAsked, QuestionInfo, QuestionReplied, QuestionRequest
from opencode_nb.session.events import SessionCreated
from opencode_nb.session.models import Session
from opencode_nb.views.records import AskRecorder


def permission(request_id: str, session_id: str) -> PermissionRequest:
    return PermissionRequest(id=request_id, session_id=session_id, agent="build", permission="bash",
                             patterns=["make"], tool=ToolRef(message_id="m", call_id="call"))


def test_answered_asks_of_the_session_and_its_children_are_recorded_with_their_call():
    bus = Bus()
    recorder = AskRecorder(bus, "root")
    bus.publish(SessionCreated(session=Session(id="child", parent_id="root", directory=".")))
    bus.publish(PermissionAsked(request=permission("p", "child")))
    bus.publish(PermissionReplied(session_id="child", request_id="p", reply="once"))
    bus.publish(QuestionAsked(request=QuestionRequest(id="q", session_id="root",
                                                      questions=[QuestionInfo(question="Which format?")])))
    bus.publish(QuestionReplied(session_id="root", request_id="q", answers=[["CSV"]]))
    [allowed, answered] = recorder.records
    assert (allowed.session_id, allowed.call_id, allowed.text) == ("child", "call",
                                                                   "? build asked for bash make: allowed once")
    assert (answered.session_id, answered.call_id, answered.text) == ("root", None, "? Which format? -> CSV")


def test_asks_of_other_sessions_and_replies_to_unseen_asks_are_left_out():
    bus = Bus()
    recorder = AskRecorder(bus, "root")
    bus.publish(PermissionAsked(request=permission("p", "elsewhere")))
    bus.publish(PermissionReplied(session_id="elsewhere", request_id="p", reply="once"))
    bus.publish(PermissionReplied(session_id="root", request_id="never-asked", reply="reject"))
    assert recorder.records == []


def test_a_closed_recorder_records_nothing_more():
    bus = Bus()
    recorder = AskRecorder(bus, "root")
    recorder.close()
    bus.publish(PermissionAsked(request=permission("p", "root")))
    bus.publish(PermissionReplied(session_id="root", request_id="p", reply="once"))
    assert recorder.records == []
