"""The one walk over a turn's changes: undo newest first, redo oldest first; before each change, its conflicts
are asked through the one `Confirm` (none given: the person's edits are kept), and what the change did joins
one `Outcome`.

The kinds of change the engine takes are the list its constructor is given: a change of any other kind is
reported unavailable, never applied, so a kind cannot slip in without being registered where the engine is
built (`kernel/rewind.py`, see docs/architecture.md).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from .change import Change, Confirm
from .outcome import Direction, Outcome

log = logging.getLogger(__name__)


class Engine:
    def __init__(self, kinds: Sequence[type[Change]]) -> None:
        self.kinds = tuple(kinds)

    async def run(self, changes: Sequence[Change], direction: Direction, confirm: Confirm | None = None) -> Outcome:
        """Take back (`undo`) or put back (`redo`) `changes`, given oldest first, in the order that direction
        walks them."""
        outcome = Outcome(direction)
        for change in (reversed(changes) if direction == "undo" else changes):
            outcome.extend(await self.step(change, direction, confirm))
        return outcome

    async def step(self, change: Change, direction: Direction, confirm: Confirm | None) -> Outcome:
        """One change: refused unless its kind is registered; a failure is reported, and the walk goes on."""
        what = change.description
        if not isinstance(change, self.kinds):
            done = Outcome(direction)
            done.add("unavailable", what.kind, what.name, "not a kind of change this undo knows")
            return done
        try:
            overwrite = {c.path for c in await change.conflicts(direction) if confirm is not None and await confirm(c)}
            return await change.apply(direction, overwrite)
        except Exception as exc:
            log.exception("the %s of %s %s failed", direction, what.kind, what.name)
            done = Outcome(direction)
            done.add("failed", what.kind, what.name, str(exc) or type(exc).__name__)
            return done
