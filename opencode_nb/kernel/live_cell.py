"""A prompt cell's output while its run works: the live view, once the run has lasted long enough to watch.

The live view is a tree of some thirty widgets; opening them, keeping them current and closing them again
costs the kernel about 10 ms a run, which is most of what a cell adds to a quick turn (`bench/bench_turn.py`).
A run that ends within `SHOW_AFTER_S` never needs it: nobody could read it before the final transcript
replaced it. So the view is built only when the run has lasted that long, or at once when something in it
needs a person (a permission or a question), when it waits for another run (queued), or when it holds a
subagent (whose prompts show inside the view). Until then the session's events are kept, in order, and
handed to the view when it is built, so it shows exactly what it would have shown from the start.

When the run ends, the final transcript takes the view's place in the cell, or is the cell's output if the
view was never shown; either way it is sent before the cell ends.

A view shown late may appear while a tool runs the model's code in the kernel, and `python` captures what
that code displays by putting its own publisher in the kernel's place, whatever displays. The cell's
outputs therefore go through the kernel's own publisher, taken from under any such capture.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import id as ids

if TYPE_CHECKING:
    from ..bus import Event
    from ..views.hub import ViewHub
    from ..views.session import SessionView

ASKS = ("permission.asked", "question.asked")

SHOW_AFTER_S = 0.1
"""A run still working after this long shows its live view."""


class LiveCell:
    """Stands in for the run's `SessionView` (queued, floor, start, finish, close) and for the cell's display
    handle (update), building and showing the view only when it is worth it.

    Args:
        hub: the views' hub; the session's events are kept through it until the view exists.
        session_id: the run's session.
        make: builds the view (it starts watching the session itself).
        show: takes a built view and returns the mime bundle that shows it in this cell (None: it is shown
            in another cell, which the caller fills).
        at_once: show the view now (a front end that must render it to be known, a run shown in another
            cell, a run that goes on after its cell ended).
        after_s: how long a run works before its view is shown.
    """

    def __init__(self, hub: ViewHub, session_id: str, make: Callable[[], SessionView],
                 show: Callable[[SessionView], dict[str, Any] | None], *, at_once: bool,
                 after_s: float = SHOW_AFTER_S) -> None:
        self.view: SessionView | None = None
        self._make = make
        self._show = show
        self._publisher = _publisher()
        self._display_id: str | None = None
        self._floor: str | None = ids.NOT_STARTED
        self._queued = False
        self._started_at: float | None = None
        self._events: list[Event] = []
        self._unwatch: Callable[[], None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._ended = False
        if at_once:
            self.show()
            return
        self._unwatch = hub.watch(session_id, self)
        try:
            self._timer = asyncio.get_running_loop().call_later(after_s, self.show)
        except RuntimeError:  # no loop to wait on: show it now
            self.show()

    # ------------------------------------------------------------------------------------------ showing

    def show(self) -> None:
        """Build the view, bring it up to date with what happened so far, and put it in the cell."""
        if self.view is not None or self._ended:
            return
        self._stop_waiting()
        view = self._make()
        view.floor = self._floor
        if self._queued:
            view.queued()
        if self._started_at is not None:
            view.start()
            view.started_at = self._started_at
        events, self._events = self._events, []
        for event in events:
            view.handle(event)
        self.view = view
        bundle = self._show(view)
        if bundle is not None:
            self._display_id = uuid.uuid4().hex
            self._publish(bundle, transient={"display_id": self._display_id})

    def _stop_waiting(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None

    # ------------------------------------------------------------------------------------------ the hub's watcher

    @property
    def running(self) -> bool:
        return False  # nothing shown yet: no clock to refresh

    def handle(self, event: Event) -> None:
        """An event of the session before the view exists: kept for it; one that needs a person shows it now."""
        self._events.append(event)
        part = getattr(event, "part", None)
        if event.type in ASKS or (event.type == "message.part.updated" and getattr(part, "tool", None) == "task"):
            self.show()

    def flush(self) -> None:
        pass

    # ------------------------------------------------------------------------------------------ the view's part

    @property
    def floor(self) -> str | None:
        return self.view.floor if self.view is not None else self._floor

    @floor.setter
    def floor(self, value: str | None) -> None:
        self._floor = value
        if self.view is not None:
            self.view.floor = value

    def queued(self) -> None:
        """The run waits for another run of its session: worth showing at once."""
        self._queued = True
        self.show()

    def start(self) -> None:
        self._started_at = time.time()
        if self.view is not None:
            self.view.start()

    def finish(self, status: str = "idle") -> None:
        self._ended = True
        self._stop_waiting()
        self._events.clear()
        if self.view is not None:
            self.view.finish(status)

    def close(self) -> None:
        self._ended = True
        self._stop_waiting()
        if self.view is not None:
            self.view.close()

    # ------------------------------------------------------------------------------------------ the handle's part

    def update(self, bundle: dict[str, Any], **kwargs: Any) -> None:
        """The final transcript (a raw mime bundle): in the view's place, or as the cell's output if no view was
        shown; nothing here if another cell showed the view (its caller fills that cell)."""
        if self._display_id is not None:
            self._publish(bundle, transient={"display_id": self._display_id}, update=True)
        elif self.view is None:
            self._publish(bundle)

    def _publish(self, bundle: dict[str, Any], **options: Any) -> None:
        if self._publisher is None:  # no kernel (a plain Python process): IPython prints the text
            from IPython.display import display

            display(bundle, raw=True)
            return
        self._publisher.publish(data=bundle, metadata={}, **options)


def _publisher() -> Any:
    """The kernel's display publisher, from under any capture put over it; None outside IPython."""
    from IPython import get_ipython

    publisher = getattr(get_ipython(), "display_pub", None)
    while (original := getattr(publisher, "original", None)) is not None:  # `python/execute.py`'s capture keeps it
        publisher = original
    return publisher
