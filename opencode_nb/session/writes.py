"""When session changes reach the store: grouped per loop turn, streamed text a little later.

Persist before render: a change reaches the store before its event is published, with one exception.
Streamed text (a delta on a text or reasoning part that is stored already) is published at once so views
stream, while the store receives the latest version of that part at most FLUSH_INTERVAL_S after the first
change it has not seen, or sooner: on any write of the part without a delta (a state change), and on
`flush()`. A killed kernel therefore loses at most that much text, and a model answering hundreds of
tokens a second costs a handful of writes instead of one per token.

Within one turn of the event loop, writes are grouped: they are queued with their events and, at the end of
the turn (`loop.call_soon`, before the loop looks at any I/O), committed in one transaction and only then
published, in order. A step's handful of writes costs one commit instead of one each, and still no event is
published before what it shows is stored. With no loop running (a script, a worker thread) a write goes
through at once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable

from ..bus import Event
from .models import Part, ReasoningPart, TextPart
from .store.database import SessionStore

log = logging.getLogger(__name__)

FLUSH_INTERVAL_S = 0.1
"""Streamed text reaches the store at least this often: a killed kernel loses at most 100 ms of output,
while a fast model's tokens still cost a few writes a second instead of one each."""

_RECENTLY_STORED = 1024
"""How many streamed part ids to remember as already stored. A delta on a part not remembered is
written through, which is only slower, never wrong: the bound keeps a long-lived kernel's memory flat."""

Write = Callable[[], None]


class WriteBuffer:
    """Orders store writes and bus events: queued per loop turn, streamed text deferred."""

    def __init__(self, store: SessionStore, publish: Callable[[Event], None]) -> None:
        self.store = store
        self.publish = publish
        self._lock = threading.RLock()
        """Held across every part write, so a deferred older version never lands after a newer one."""
        self._dirty: dict[str, Part] = {}
        """Streamed parts whose newest version has been published but not yet written."""
        self._stored: OrderedDict[str, None] = OrderedDict()
        """Ids of text and reasoning parts known to be in the store (the newest _RECENTLY_STORED)."""
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        self._turn: list[tuple[Write | None, Event]] = []
        """Writes and their events queued during the current loop turn, committed together at its end."""
        self._turn_loop: asyncio.AbstractEventLoop | None = None

    def write(self, write: Write, event: Event) -> None:
        """Write and publish now, or, on a running loop, queue both for the end of this turn."""
        loop = _running_loop()
        if loop is None or (self._turn and self._turn_loop is not loop):
            self.commit()
            write()
            self.publish(event)
            return
        if not self._turn:
            self._turn_loop = loop
            loop.call_soon(self.commit)
        self._turn.append((write, event))

    def write_part(self, part: Part, event: Event, *, streamed: bool = False) -> None:
        """Store `part` and publish `event`; a streamed change of a stored text part may be written later."""
        if streamed and isinstance(part, TextPart | ReasoningPart) and self._defer(part):
            if self._turn:
                self._turn.append((None, event))  # keep events in order behind the queued ones
            else:
                self.publish(event)
            return
        self.write(lambda: self._put(part), event)

    def commit(self) -> None:
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
            self.publish(event)

    def flush(self) -> None:
        """Commit the turn and write every streamed part whose newest version is not stored yet.

        A pending timer is left to fire and find nothing to do: cancelling it from a thread other than its
        loop's would not be safe, and an early extra flush costs nothing.
        """
        self.commit()
        with self._lock:
            parts = list(self._dirty.values())
            self._dirty.clear()  # before writing: a part that cannot be written must not fail every flush
            self.store.put_parts(parts)

    def _put(self, part: Part) -> None:
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
        loop = _running_loop()
        if loop is None:
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


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
