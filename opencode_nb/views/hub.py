"""Routing bus events to the views of their session, and pacing what reaches the front end.

One subscription per workspace serves every view: an event is handed to the views watching its session
only. Views never push widget state themselves when an event arrives; they mark themselves dirty and the
hub flushes dirty views at most `FLUSH_INTERVAL_S` apart. Streamed text arrives as thousands of deltas,
and every widget update resends the whole value, so this pacing is what keeps the kernel's CPU and the
comm traffic flat however fast a model streams.

Everything here runs on the event loop the bus publishes on. Clicks that arrive on other threads are
forwarded to the services (which are thread-safe) or marshalled with `call_soon_threadsafe`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from ..bus import Bus, Event
from ..handoff import run_on
from ..people import Person, nobody
from ..permission.events import PermissionAsked, PermissionReplied
from ..question.events import QuestionAsked, QuestionReplied
from ..session.events import (
    HookReported,
    MessagePartUpdated,
    MessageUpdated,
    SessionCreated,
    SessionError,
    SessionIdle,
    SessionStatus,
    SessionUpdated,
    TodoUpdated,
)

log = logging.getLogger(__name__)

FLUSH_INTERVAL_S = 0.2
"""Views flush at most this often, and at least this soon after a change: with the header's once-a-second
clock that keeps a streaming answer under 10 widget updates a second."""
CLOCK_INTERVAL_S = 1.0
"""Running views refresh their elapsed-time display this often."""


class Watcher(Protocol):
    def handle(self, event: Event) -> None: ...

    def flush(self) -> None: ...

    @property
    def running(self) -> bool: ...


def session_of(event: Event) -> str | None:
    """The session an event belongs to; None for events of no session a view shows."""
    match event:
        case MessagePartUpdated(part=part):
            return part.session_id
        case MessageUpdated(message=message):
            return message.session_id
        case PermissionAsked(request=request) | QuestionAsked(request=request):
            return request.session_id
        case SessionCreated(session=session) | SessionUpdated(session=session):
            return session.id
        case (SessionStatus() | SessionIdle() | SessionError() | TodoUpdated() | PermissionReplied()
              | QuestionReplied() | HookReported()):
            return event.session_id
        case _:
            return None


class ViewHub:
    """The workspace's views, by session; created once per workspace by the kernel (or a test)."""

    def __init__(self, bus: Bus, *, interval_s: float = FLUSH_INTERVAL_S) -> None:
        self.interval_s = interval_s
        self._watchers: dict[str, list[Watcher]] = {}
        self._dirty: dict[int, Watcher] = {}
        self._handle: asyncio.TimerHandle | None = None
        self._clock: asyncio.TimerHandle | None = None
        self._last_flush = float("-inf")  # the first change is sent at once, whatever the clock reads
        self._loop: asyncio.AbstractEventLoop | None = None
        self.flushes = 0
        """How many flushes ran (benchmarks report it)."""
        self.person: Callable[[], Person | None] = nobody
        """Who sent the message being handled now (a click), where the pages say; the kernel sets it."""
        # The hub shows prompts a person answers, so it subscribes to the ask events by their types: that is how
        # a workspace knows somebody may answer and does not decide asks by its unattended policy.
        offs = [bus.subscribe(Event.ALL, self._route_others), bus.subscribe(PermissionAsked, self._route),
                bus.subscribe(QuestionAsked, self._route)]
        self._off = lambda: [off() for off in offs]

    def watch(self, session_id: str, watcher: Watcher) -> Callable[[], None]:
        self._watchers.setdefault(session_id, []).append(watcher)
        self._ensure_clock()

        def unwatch() -> None:
            watchers = self._watchers.get(session_id, [])
            if watcher in watchers:
                watchers.remove(watcher)
            if not watchers:
                self._watchers.pop(session_id, None)

        return unwatch

    def close(self) -> None:
        self._off()
        for handle in (self._handle, self._clock):
            if handle is not None:
                handle.cancel()
        self.flush_all()
        self._watchers.clear()

    # ------------------------------------------------------------------------------------------ events

    def _route_others(self, event: Event) -> None:
        if not isinstance(event, PermissionAsked | QuestionAsked):
            self._route(event)

    def _route(self, event: Event) -> None:
        session_id = session_of(event)
        if session_id is None:
            return
        for watcher in list(self._watchers.get(session_id, ())):
            try:
                watcher.handle(event)
            except Exception:
                log.exception("view failed on %s", event.type)

    # ------------------------------------------------------------------------------------------ pacing

    def mark(self, watcher: Watcher) -> None:
        """Ask for `watcher.flush()` soon, coalescing with every other change before then."""
        self._dirty[id(watcher)] = watcher
        if self._handle is not None:
            return
        loop = self._running_loop()
        if loop is None:
            self.flush_all()
            return
        delay = max(0.0, self._last_flush + self.interval_s - time.monotonic())
        self._handle = loop.call_later(delay, self._flush_due)

    def flush_all(self) -> None:
        """Push every pending change now (a run ended, a prompt needs an answer)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        dirty, self._dirty = self._dirty, {}
        if not dirty:
            return
        self._last_flush = time.monotonic()
        self.flushes += 1
        for watcher in dirty.values():
            try:
                watcher.flush()
            except Exception:
                log.exception("view flush failed")

    def _flush_due(self) -> None:
        self._handle = None
        self.flush_all()

    def _ensure_clock(self) -> None:
        loop = self._running_loop()
        if loop is not None and self._clock is None:
            self._clock = loop.call_later(CLOCK_INTERVAL_S, self._tick)

    def _tick(self) -> None:
        self._clock = None
        for watcher in [w for ws in self._watchers.values() for w in ws if w.running]:
            self.mark(watcher)
        if self._watchers:
            self._ensure_clock()  # views may start running later (after the front-end probe, a queue)

    def _running_loop(self) -> asyncio.AbstractEventLoop | None:
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        return self._loop

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn` on the views' loop, from any thread (click handlers)."""
        run_on(self._loop, fn, *args)
