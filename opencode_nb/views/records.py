"""Asks and their answers during a run, kept for the transcript.

The store keeps each tool call but not who allowed it, and a headless run has no view to remember the
prompts it never showed. This recorder follows the bus for a session and the children it starts, and
keeps one record per answered ask.
"""

from __future__ import annotations

from typing import Any

from ..bus import Bus, Event
from .render import permission_record_html, permission_record_text, question_record_html, question_record_text
from .transcript import Record


class AskRecorder:
    def __init__(self, bus: Bus, session_id: str) -> None:
        self.sessions = {session_id}
        self.records: list[Record] = []
        self._asked: dict[str, Any] = {}
        self._offs = [bus.subscribe(name, self._on) for name in (
            "session.created", "permission.asked", "permission.replied", "question.asked", "question.replied")]

    def close(self) -> None:
        for off in self._offs:
            off()

    def _on(self, event: Event) -> None:
        e: Any = event
        if e.type == "session.created":
            if e.session.parent_id in self.sessions:
                self.sessions.add(e.session.id)
        elif e.type.endswith(".asked"):
            if e.request.session_id in self.sessions:
                self._asked[e.request.id] = e.request
        else:
            request = self._asked.pop(e.request_id, None)
            if request is None:
                return
            if e.type == "permission.replied":
                html = permission_record_html(request, e.reply, message=e.message, reason=e.reason)
                text = permission_record_text(request, e.reply, message=e.message, reason=e.reason)
                call_id = request.tool.call_id if request.tool else None
            else:
                html = question_record_html(request, e.answers, e.reason)
                text = question_record_text(request, e.answers, e.reason)
                call_id = request.tool.call_id if request.tool else None
            self.records.append(Record(session_id=request.session_id, call_id=call_id, html=html, text=text))
