"""What one undoable change is, to the engine: something that can be taken back and put back, that says what
it names, and that tells beforehand where either would write over the person's own edit.

This sits below the parts that make changes (checkpoint/ for files, kernel/ for cells and bindings), so each
of them implements `Change` and none of the surfaces needs to know which kinds exist.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

from .outcome import Direction, Outcome


@dataclass(frozen=True)
class Description:
    """What a change is about, for the person: its kind ("file", "cell", "binding") and what it names."""

    kind: str
    name: str


@dataclass(frozen=True)
class Conflict:
    """Something the person changed after the agent did (a file edited, a name rebound): an undo or a redo
    would write over their change."""

    path: str
    """What is in conflict: a file's relative path, a cell id, a name."""
    diff: str
    """Unified diff from what the agent left to the person's current state: what writing over it would lose."""
    reason: str
    """One line for the person."""


Confirm = Callable[[Conflict], Awaitable[bool]]
"""Asked once per conflict: True overwrites the person's change, False keeps it. Without one (no page to ask
in) every conflict is kept."""


class Change(ABC):
    """One undoable change. `undo` and `redo` are one walk (`apply`) in opposite directions, so the two can never
    drift apart."""

    @property
    @abstractmethod
    def description(self) -> Description:
        """What the change names, for the outcome and the card."""

    @abstractmethod
    async def conflicts(self, direction: Direction) -> list[Conflict]:
        """Where going `direction` would write over the person's edits: asked before anything is written."""

    @abstractmethod
    async def apply(self, direction: Direction, overwrite: Collection[str]) -> Outcome:
        """Go `direction`; a conflict whose `path` is not in `overwrite` is kept as the person left it."""

    async def undo(self, overwrite: Collection[str] = ()) -> Outcome:
        return await self.apply("undo", overwrite)

    async def redo(self, overwrite: Collection[str] = ()) -> Outcome:
        return await self.apply("redo", overwrite)
