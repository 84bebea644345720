"""In-process publish/subscribe of typed events.

Every event is a frozen pydantic model whose `type` is a stable `concept.past-tense` string. The event
classes live with their concept (`session.events`, `permission.events`, `question.events`); this module
only carries them. A failing subscriber is logged and never breaks the publisher: views and tests must
not be able to stop the loop.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

log = logging.getLogger(__name__)

Handler = Callable[[Any], Awaitable[None] | None]


class Event(BaseModel):
    """Base of every bus event; subclasses set `type` to a `Literal` default."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    type: str
    ALL: ClassVar[str] = "*"


class Bus:
    """Delivers each published event to the subscribers of its type, then to the subscribers of all types.

    Sync handlers run inline, in subscription order. Async handlers are scheduled as tasks on the running
    loop and kept until they finish, so a slow view never delays the publisher.
    """

    def __init__(self) -> None:
        self._subs: dict[str, list[Handler]] = {}
        self._watchers: dict[str, int] = {}
        """How many of each type's handlers only watch."""
        self._tasks: set[asyncio.Task[Any]] = set()

    def subscribe(self, event_type: str | type[Event], handler: Handler, *, watch_only: bool = False
                  ) -> Callable[[], None]:
        """Call `handler(event)` for every event of `event_type` (`"*"` for all).

        Args:
            watch_only: the handler only records what happens (a transcript, a log). It is not counted by
                `subscribed`, so it never passes for somebody who may answer an ask.

        Returns:
            A function that removes this subscription; calling it twice is harmless.
        """
        key = _type_name(event_type)
        self._subs.setdefault(key, []).append(handler)
        if watch_only:
            self._watchers[key] = self._watchers.get(key, 0) + 1
        removed = False

        def unsubscribe() -> None:
            nonlocal removed
            handlers = self._subs.get(key, [])
            if not removed and handler in handlers:
                removed = True
                handlers.remove(handler)
                if watch_only:
                    self._watchers[key] -= 1

        return unsubscribe

    def subscribed(self, event_type: str | type[Event]) -> bool:
        """Whether anything but a watcher listens to `event_type` itself (`"*"` subscribers do not count).
        An ask with such a listener has somebody who may answer it."""
        key = _type_name(event_type)
        return len(self._subs.get(key, ())) > self._watchers.get(key, 0)

    def publish(self, event: Event) -> None:
        for handler in (*self._subs.get(event.type, ()), *self._subs.get(Event.ALL, ())):
            try:
                result = handler(event)
                if inspect.isawaitable(result):
                    self._schedule(result, event)
            except Exception:
                log.exception("bus subscriber %r failed on %s", handler, event.type)

    async def drain(self) -> None:
        """Wait for the async handlers scheduled so far (tests and shutdown use it)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _schedule(self, awaitable: Awaitable[None], event: Event) -> None:
        async def run() -> None:
            try:
                await awaitable
            except Exception:
                log.exception("async bus subscriber failed on %s", event.type)

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(run())  # published from plain sync code, e.g. a CLI listing: run it now
            return
        task = loop.create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _type_name(event_type: str | type[Event]) -> str:
    if isinstance(event_type, str):
        return event_type
    field = event_type.model_fields["type"]
    if not isinstance(field.default, str):
        raise TypeError(f"{event_type.__name__} has no fixed `type`")
    return field.default
