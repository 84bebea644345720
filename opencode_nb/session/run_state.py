"""What one run of the loop carries from step to step; the loop and its helpers (compaction, reminders,
subtasks) share it, so it lives apart from all of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .history import History
from .runlog import RunLog


@dataclass
class RunState:
    """What one loop run keeps between steps instead of recomputing it."""

    session_id: str
    log: RunLog
    """Every write of the run goes through it: the store and `history` change together."""
    recent_calls: list[str] = field(default_factory=list)
    environment: dict[str, str] = field(default_factory=dict)
    instructions: list[str] | None = None
    setup: dict[tuple[str, str, int], tuple[Any, ...]] = field(default_factory=dict)
    """Per (agent, user message, tool registry version): ruleset, tools, system blocks, reminders and tool specs,
    which its steps share until the registry changes."""
    cost: float = 0.0
    """Spent in this run; added to the session once, when the run ends."""

    @property
    def history(self) -> History:
        return self.log.history
