"""Asks and their answers during a run, kept for the transcript.

The store keeps each tool call but not who allowed it, and a headless run has no view to remember the
prompts it never showed. This recorder follows the bus for a session and the children it starts, and
keeps one record per answered ask. It subscribes as a watcher: a plain subscriber to an ask's type is taken
as somebody who may answer it.
"""

from __future__ import annotations

from ..bus import Bus, Event
from ..permission.events import PermissionAsked, PermissionReplied, PermissionRequest
from ..question.events import QuestionAsked, QuestionReplied, QuestionRequest
from ..session.events import SessionCreated
from .asks import permission_record_html, permission_record_text, question_record_html, question_record_text
from .transcript import Record


class AskRecorder:
    def __init__(self, bus: Bus, session_id: str) -> None:
        self.sessions = {session_id}
        self.records: list[Record] = []
        self._asked: dict[str, PermissionRequest | QuestionRequest] = {}
        offs = [bus.subscribe(kind, self._on, watch_only=True) for kind in (
            SessionCreated, PermissionAsked, QuestionAsked, PermissionReplied, QuestionReplied)]
        self._off = lambda: [off() for off in offs]

    def close(self) -> None:
        self._off()

    def _on(self, event: Event) -> None:
        match event:
            case SessionCreated(session=session):
                if session.parent_id in self.sessions:
                    self.sessions.add(session.id)
            case PermissionAsked(request=request) | QuestionAsked(request=request):
                if request.session_id in self.sessions:
                    self._asked[request.id] = request
            case PermissionReplied() | QuestionReplied():
                self._on_replied(event)

    def _on_replied(self, event: PermissionReplied | QuestionReplied) -> None:
        request = self._asked.pop(event.request_id, None)
        match request, event:
            case PermissionRequest(), PermissionReplied():
                html = permission_record_html(request, event.reply, message=event.message, reason=event.reason,
                                              by=event.by)
                text = permission_record_text(request, event.reply, message=event.message, reason=event.reason,
                                              by=event.by)
            case QuestionRequest(), QuestionReplied():
                html = question_record_html(request, event.answers, event.reason)
                text = question_record_text(request, event.answers, event.reason)
            case _:
                return
        call_id = request.tool.call_id if request.tool else None
        self.records.append(Record(session_id=request.session_id, call_id=call_id, html=html, text=text))
