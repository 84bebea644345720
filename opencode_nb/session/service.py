"""`ws.sessions`: the store plus bus events, as the loop and the views use them.

Persist before render: every change is stored before its event is published, except streamed text, which
is published at once and stored shortly after; `WriteBuffer` (writes.py) orders the two. A running loop
changes its session through its `RunLog` (runlog.py), which writes here and into its in-memory history in
one call.
"""

from __future__ import annotations

import builtins
import datetime as dt
import re
from pathlib import Path
from typing import Any

from ..bus import Bus
from ..permission.rules import Grant, Rule
from .events import MessagePartUpdated, MessageUpdated, SessionCreated, SessionUpdated, Todo, TodoUpdated
from .models import AssistantMessage, MessageWithParts, Part, Session, UserMessage, now
from .store.database import SessionStore
from .writes import FLUSH_INTERVAL_S, WriteBuffer

__all__ = ["FLUSH_INTERVAL_S", "SessionService", "make_slug"]


class SessionService:
    """Sessions, messages, parts and todos: stored, then published on the bus.

    Also the permission engine's grant store: "always" grants live on the root session of a tree.
    """

    def __init__(self, store: SessionStore, bus: Bus, *, directory: str | Path | None = None) -> None:
        self.store = store
        self.bus = bus
        self.directory = str(directory) if directory is not None else None
        """Where new sessions work unless told otherwise: the workspace's directory."""
        self.writes = WriteBuffer(store, bus.publish)

    # ------------------------------------------------------------------------------------------ sessions

    def create(
        self,
        directory: str | Path | None = None,
        title: str = "",
        parent_id: str | None = None,
        permission: builtins.list[Rule] | None = None,
        notebook: str = "",
    ) -> Session:
        """Store a new session and publish `session.created`.

        Args:
            directory: the project directory the session works in; the workspace's by default (a child's
                parent's).
            title: empty for the default, `New session - <ISO time>` (`Child session - …` for a child),
                which the title agent later replaces.
            parent_id: the session whose task call creates this one.
            permission: rules of this session itself, checked after its agent's.
            notebook: the notebook that started it (children inherit their parent's).

        Raises:
            NotFoundError: `parent_id` names no session.
            ValueError: no directory was given and the service has no default.
        """
        if parent_id is not None:
            parent = self.store.get_session(parent_id)
            notebook = notebook or parent.notebook
            directory = directory if directory is not None else parent.directory
        directory = directory if directory is not None else self.directory
        if directory is None:
            raise ValueError("create() needs a directory: this session service was made without a default one")
        stamp = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        default = f"{'Child' if parent_id else 'New'} session - {stamp}"
        session = Session(
            directory=str(directory), title=title or default, parent_id=parent_id, permission=list(permission or []),
            notebook=notebook,
        )
        session = session.model_copy(update={"slug": self._unique_slug(title, session.id)})
        self.writes.commit()
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
        self.writes.commit()
        self.store.update_session(session)
        self.bus.publish(SessionUpdated(session=session))
        return session

    def discard_if_empty(self, session_id: str) -> bool:
        """Delete the session if nothing was ever written to it (no message, no child); returns whether it did.

        A prompt that fails before its first message is stored (no API key, stopped while it waited) would
        otherwise leave a "New session - …" behind with nothing in it, listed forever.
        """
        self.writes.commit()
        return self.store.delete_if_empty(session_id)

    def is_empty(self, session_id: str) -> bool:
        """Whether the session holds no message yet (`%agent new` made it, or a prompt never reached it)."""
        self.writes.commit()
        return not self.store.has_messages(session_id)

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

    def messages(self, session_id: str, since: str | None = None) -> builtins.list[MessageWithParts]:
        """The session's history as stored, streamed text included (buffered text is written first); with
        `since`, only its messages from that id on."""
        self.flush()
        return self.store.messages(session_id, since)

    def activity(self, session_id: str) -> tuple[str, int]:
        """(agent of the latest answer, tokens of all answers), without loading the history."""
        self.writes.commit()
        return self.store.activity(session_id)

    def last_activity(self, session_id: str) -> float:
        """When something last happened in the session (its newest message or part), else when it was made."""
        self.writes.commit()
        return self.store.last_activity(session_id) or self.get(session_id).created_at

    def current_agent(self, session_id: str, before: str | None = None) -> str | None:
        """The agent that answers the session's next prompt: the one its newest user message names (with
        `before`, the one that answered the prompts before that message id)."""
        self.writes.commit()
        return self.store.current_agent(session_id, before)

    def discard_undone(self, session_id: str) -> int:
        """Delete for good the turns an undo kept aside for redo (a new prompt does this); returns the number
        of messages deleted."""
        self.writes.commit()
        return self.store.discard_undone(session_id)

    def add_message(self, message: UserMessage | AssistantMessage) -> None:
        self.writes.write(lambda: self.store.add_message(message), _message_event(message))

    def update_message(self, message: UserMessage | AssistantMessage) -> None:
        self.writes.write(lambda: self.store.update_message(message), _message_event(message))

    def add_part(self, part: Part) -> None:
        """Store a new part (or replace it), then publish it."""
        self.writes.write_part(part, _part_event(part))

    def update_part(self, part: Part, delta: str | None = None) -> None:
        """Publish a changed part and store it.

        Args:
            part: the whole new version of the part.
            delta: the text appended to a text or reasoning part since its last event; the store write
                of such a change may wait up to FLUSH_INTERVAL_S. Without a delta the write is immediate.
        """
        self.writes.write_part(part, _part_event(part, delta), streamed=delta is not None)

    def flush(self) -> None:
        """Write everything queued or buffered, streamed text included."""
        self.writes.flush()

    # ------------------------------------------------------------------------------------------ todos

    def set_todos(self, session_id: str, todos: builtins.list[Todo]) -> None:
        self.writes.commit()
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
