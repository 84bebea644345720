"""`ws.sessions`: the store plus bus events, as the loop and the views use them.

Persist before render: a part reaches the store before its first event is published, and every other
change is written before it is published too, with one exception. Streamed text (a delta on a text or
reasoning part) is published at once so views stream, while the store receives the latest version of
that part at most FLUSH_INTERVAL_S after the first change it has not seen, or sooner: on any update of
the part without a delta (a state change), on `flush()`, on `messages()` and on `close()`. A killed
kernel therefore loses at most that much text, and a model answering hundreds of tokens a second costs
a handful of writes instead of one per token.

The deferred write runs on the running asyncio loop (`loop.call_later`); code that updates parts with
no loop running (a script, a worker thread) writes through at once.

Within one turn of the event loop, message and part writes are grouped: they are queued with their
events, and at the end of the turn (`loop.call_soon`, before the loop looks at any I/O) they are
committed in one transaction and only then published, in order. A step's handful of writes then costs
one commit instead of one each, and still no event is published before what it shows is stored.
"""

from __future__ import annotations

import asyncio
import builtins
import datetime as dt
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..bus import Bus, Event
from ..permission.rules import Grant, Rule
from .events import MessagePartUpdated, MessageUpdated, SessionCreated, SessionUpdated, Todo, TodoUpdated
from .models import AssistantMessage, MessageWithParts, Part, ReasoningPart, Session, TextPart, UserMessage, now
from .store import SessionStore

log = logging.getLogger(__name__)

FLUSH_INTERVAL_S = 0.1
"""Streamed text reaches the store at least this often: a killed kernel loses at most 100 ms of output,
while a fast model's tokens still cost a few writes a second instead of one each."""

_RECENTLY_STORED = 1024
"""How many streamed part ids to remember as already stored. A delta on a part not remembered is
written through, which is only slower, never wrong: the bound keeps a long-lived kernel's memory flat."""


class SessionService:
    """Sessions, messages, parts and todos: stored, then published on the bus.

    Also the permission engine's grant store: "always" grants live on the root session of a tree.
    """

    def __init__(self, store: SessionStore, bus: Bus) -> None:
        self.store = store
        self.bus = bus
        self._lock = threading.RLock()
        """Held across every part write, so a deferred older version never lands after a newer one."""
        self._dirty: dict[str, Part] = {}
        """Streamed parts whose newest version has been published but not yet written."""
        self._stored: OrderedDict[str, None] = OrderedDict()
        """Ids of text and reasoning parts known to be in the store (the newest _RECENTLY_STORED)."""
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        self._turn: builtins.list[tuple[Callable[[], None] | None, Event]] = []
        """Writes and their events queued during the current loop turn, committed together at its end."""
        self._turn_loop: asyncio.AbstractEventLoop | None = None

    # ------------------------------------------------------------------------------------------ sessions

    def create(
        self,
        directory: str,
        title: str = "",
        parent_id: str | None = None,
        permission: builtins.list[Rule] | None = None,
        notebook: str = "",
    ) -> Session:
        """Store a new session and publish `session.created`.

        Args:
            directory: the project directory the session works in.
            title: empty for the default, `New session - <ISO time>` (`Child session - …` for a child),
                which the title agent later replaces.
            parent_id: the session whose task call creates this one.
            permission: rules of this session itself, checked after its agent's.
            notebook: the notebook that started it (children inherit their parent's).

        Raises:
            NotFoundError: `parent_id` names no session.
        """
        if parent_id is not None:
            parent = self.store.get_session(parent_id)
            notebook = notebook or parent.notebook
        stamp = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        default = f"{'Child' if parent_id else 'New'} session - {stamp}"
        session = Session(
            directory=str(directory), title=title or default, parent_id=parent_id, permission=list(permission or []),
            notebook=notebook,
        )
        session = session.model_copy(update={"slug": self._unique_slug(title, session.id)})
        self._end_turn()
        self.store.create_session(session)
        self.bus.publish(SessionCreated(session=session))
        return session

    def get(self, session_id: str) -> Session:
        """Raises `NotFoundError` for an unknown id."""
        return self.store.get_session(session_id)

    def list(self, directory: str | None = None, include_children: bool = False) -> builtins.list[Session]:
        """Newest activity first; root sessions only unless `include_children`."""
        return self.store.list_sessions(directory, include_children=include_children)

    def children(self, session_id: str) -> builtins.list[Session]:
        return self.store.children(session_id)

    def update(self, session: Session, **changes: Any) -> Session:
        """Store the session with `changes` applied and `updated_at` bumped, publish it and return it.

        The changes apply to `session` as given, every other field included: pass one just read with `get`.

        Raises:
            pydantic.ValidationError: a change has the wrong type or names no field.
            NotFoundError: the session is not stored.
        """
        session = Session.model_validate({**session.model_dump(), **changes, "updated_at": now()})
        self._end_turn()
        self.store.update_session(session)
        self.bus.publish(SessionUpdated(session=session))
        return session

    def _unique_slug(self, title: str, session_id: str) -> str:
        """The title's slug plus 8 characters of the id, or more of the id if another session has that one."""
        for length in range(8, len(session_id.split("_", 1)[-1]) + 4, 4):
            slug = make_slug(title, session_id, length)
            if not self.store.slug_taken(slug):
                return slug
        n = 2
        while self.store.slug_taken(f"{slug}-{n}"):
            n += 1
        return f"{slug}-{n}"

    # ------------------------------------------------------------------------------------------ messages

    def messages(self, session_id: str) -> builtins.list[MessageWithParts]:
        """The session's history as stored, streamed text included (buffered text is written first)."""
        self.flush()
        return self.store.messages(session_id)

    def activity(self, session_id: str) -> tuple[str, int]:
        """(agent of the latest answer, tokens of all answers), without loading the history."""
        self._end_turn()
        return self.store.activity(session_id)

    def add_message(self, message: UserMessage | AssistantMessage) -> None:
        self._in_turn(lambda: self.store.add_message(message), _message_event(message))

    def update_message(self, message: UserMessage | AssistantMessage) -> None:
        self._in_turn(lambda: self.store.update_message(message), _message_event(message))

    def add_part(self, part: Part) -> None:
        """Store a new part (or replace it), then publish it."""
        self._in_turn(lambda: self._write(part), _part_event(part))

    def update_part(self, part: Part, delta: str | None = None) -> None:
        """Publish a changed part and store it.

        Args:
            part: the whole new version of the part.
            delta: the text appended to a text or reasoning part since its last event; the store write
                of such a change may wait up to FLUSH_INTERVAL_S. Without a delta the write is immediate.
        """
        streamed = delta is not None and isinstance(part, TextPart | ReasoningPart)
        event = _part_event(part, delta)
        if streamed and self._defer(part):
            if self._turn:
                self._turn.append((None, event))  # keep events in order behind the queued ones
            else:
                self.bus.publish(event)
            return
        self._in_turn(lambda: self._write(part), event)

    def _in_turn(self, write: Callable[[], None], event: Event) -> None:
        """Write and publish now, or, on a running loop, queue both for the end of this turn."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None or (self._turn and self._turn_loop is not loop):
            self._end_turn()
            write()
            self.bus.publish(event)
            return
        if not self._turn:
            self._turn_loop = loop
            loop.call_soon(self._end_turn)
        self._turn.append((write, event))

    def _end_turn(self) -> None:
        """Commit the queued writes in one transaction, then publish their events in order."""
        queued, self._turn = self._turn, []
        if not queued:
            return
        try:
            with self.store.transaction():
                for write, _ in queued:
                    if write is not None:
                        write()
        except Exception:
            # One bad write must not take the others with it: write them one by one.
            for write, _ in queued:
                try:
                    if write is not None:
                        write()
                except Exception:
                    log.exception("could not store a queued change in %s", self.store.path)
        for _, event in queued:
            self.bus.publish(event)

    def flush(self) -> None:
        """Write every streamed part whose newest version is not stored yet.

        A pending timer is left to fire and find nothing to do: cancelling it from a thread other than its
        loop's would not be safe, and an early extra flush costs nothing.
        """
        self._end_turn()
        with self._lock:
            parts = list(self._dirty.values())
            self._dirty.clear()  # before writing: a part that cannot be written must not fail every flush
            self.store.put_parts(parts)

    def _write(self, part: Part) -> None:
        with self._lock:
            self._dirty.pop(part.id, None)  # this version supersedes any buffered one
            self.store.put_part(part)
            if isinstance(part, TextPart | ReasoningPart):
                self._stored[part.id] = None
                self._stored.move_to_end(part.id)
                if len(self._stored) > _RECENTLY_STORED:
                    self._stored.popitem(last=False)

    def _defer(self, part: Part) -> bool:
        """Buffer the part for a timed write; False when it must be written now instead."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        with self._lock:
            if part.id not in self._stored:
                return False  # its first version: persist before render
            if self._timer is not None and self._timer_loop is not loop:
                self.flush()  # the loop that was to flush may have ended (a finished asyncio.run)
                self._timer = None
            self._dirty[part.id] = part
            if self._timer is None:
                self._timer = loop.call_later(FLUSH_INTERVAL_S, self._flush_due)
                self._timer_loop = loop
            return True

    def _flush_due(self) -> None:
        with self._lock:
            self._timer = self._timer_loop = None
        try:
            self.flush()
        except Exception:
            log.exception("could not write streamed text to %s", self.store.path)

    # ------------------------------------------------------------------------------------------ todos

    def set_todos(self, session_id: str, todos: builtins.list[Todo]) -> None:
        self._end_turn()
        self.store.set_todos(session_id, todos)
        self.bus.publish(TodoUpdated(session_id=session_id, todos=list(todos)))

    def todos(self, session_id: str) -> builtins.list[Todo]:
        return self.store.todos(session_id)

    # ------------------------------------------------------------------------------------------ grants

    def root_of(self, session_id: str) -> str:
        """The id of the session at the top of `session_id`'s tree (itself for a root)."""
        session = self.get(session_id)
        seen = {session.id}
        while session.parent_id:
            session = self.get(session.parent_id)
            if session.id in seen:
                raise ValueError(f"session {session_id} has a cycle of parents through {session.id}")
            seen.add(session.id)
        return session.id

    def load_grants(self, root_id: str) -> builtins.list[Grant]:
        return list(self.get(root_id).approved)

    def save_grants(self, root_id: str, grants: builtins.list[Grant]) -> None:
        """Keep the grants on the root session; publishes `session.updated`."""
        self.update(self.get(root_id), approved=list(grants))

    # ------------------------------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Write buffered text and close the store."""
        self.flush()
        self.store.close()


def _part_event(part: Part, delta: str | None = None) -> MessagePartUpdated:
    """The event of a part, which is a validated model already: built without validating it again, since
    one part can be published thousands of times while it streams."""
    return MessagePartUpdated.model_construct(part=part, delta=delta)


def _message_event(message: UserMessage | AssistantMessage) -> MessageUpdated:
    return MessageUpdated.model_construct(message=message)


def make_slug(title: str, session_id: str, tail_length: int = 8) -> str:
    """A short file-name-safe name: the title's words if any, then the end of the id, which is random."""
    words = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40].strip("-")
    tail = session_id.split("_", 1)[-1][-tail_length:].lower()
    return f"{words}-{tail}" if words else tail
