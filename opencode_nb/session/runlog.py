"""The one way a running loop changes its session.

A run keeps the session's history in memory (history.py) so a step never re-reads the store. Two copies
must then agree, so nothing writes one without the other: every message and part the loop, the
processor, compaction or a subtask produces goes through `RunLog`, which stores and publishes it through
the session service and puts it into the history in the same call.

It is also where known secret values leave what a run produced (`secrets`): every message and part is
redacted before it is stored, published or put into the history, so views, the store and the model's next
request all see `[redacted: NAME]`. A text or reasoning part being streamed (added open, then grown by
deltas) goes through a `secrets.Stream`, which holds back an end that may be the start of a key until the
next delta settles it; a key split across two deltas is never shown or stored in halves.
"""

from __future__ import annotations

from .. import secrets
from .history import History
from .models import AssistantMessage, Part, ReasoningPart, TextPart, UserMessage
from .service import SessionService


class RunLog:
    def __init__(self, sessions: SessionService, session_id: str) -> None:
        self.sessions = sessions
        self.session_id = session_id
        self.history = History.load(sessions, session_id)
        self._streams: dict[str, secrets.Stream] = {}
        """Text and reasoning parts being streamed, by id; dropped when the part is written whole."""
        secrets.refresh()  # a key set in the kernel's environment since the last run

    def add_message(self, message: UserMessage | AssistantMessage) -> None:
        message = secrets.active().redact_value(message)
        self.sessions.add_message(message)
        self.history.put_message(message)

    def update_message(self, message: UserMessage | AssistantMessage) -> None:
        message = secrets.active().redact_value(message)
        self.sessions.update_message(message)
        self.history.put_message(message)

    def add_part(self, part: Part) -> None:
        part, _ = self._redacted(part, None)
        self.sessions.add_part(part)
        self.history.put_part(part)

    def update_part(self, part: Part, delta: str | None = None) -> None:
        part, delta = self._redacted(part, delta)
        self.sessions.update_part(part, delta=delta)
        self.history.put_part(part)

    def _redacted(self, part: Part, delta: str | None) -> tuple[Part, str | None]:
        """The part as it may be shown and stored, and the delta of its shown text (None: not a pure append)."""
        redactor = secrets.active()
        if not redactor:
            return part, delta
        streamed = (part if isinstance(part, TextPart | ReasoningPart) and part.started_at is not None
                    and part.ended_at is None else None)
        stream = self._streams.get(part.id)
        # the processor opens a streamed part with its first delta
        if streamed is not None and stream is None and delta is None:
            stream = self._streams[part.id] = secrets.Stream(redactor)
            delta = streamed.text
        if streamed is None or stream is None or delta is None or not stream.follows(streamed.text, delta):
            self._streams.pop(part.id, None)
            clean = redactor.redact_value(part)
            return clean, (delta if clean is part else None)
        before = stream.shown_size
        shown = stream.feed(streamed.text, delta)
        if shown is not streamed.text:
            part = streamed.model_copy(update={"text": shown})
        return part, shown[before:]
