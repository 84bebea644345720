"""What one run of the loop carries from step to step; the loop and its helpers (compaction, reminders,
subtasks) share it, so it lives apart from all of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from .history import History
from .runlog import RunLog

if TYPE_CHECKING:
    from ..permission.rules import Ruleset
    from ..provider.request import ToolSpec
    from ..tool.base import Tool


class StepSetup(NamedTuple):
    """What an agent's steps for one user message share until the tool registry changes: computed once."""

    ruleset: Ruleset
    """The agent's rules, then the session's."""
    tools: dict[str, Tool[Any]]
    """The tools the agent is offered, by id."""
    system: list[str]
    """The system blocks of every request."""
    reminders: list[str]
    """Notes added after the history (the plan agent's reminder)."""
    specs: list[ToolSpec]
    """What the provider is told about each of `tools`, as the agent sees them."""


@dataclass
class RunState:
    """What one loop run keeps between steps instead of recomputing it."""

    session_id: str
    log: RunLog
    """Every write of the run goes through it: the store and `history` change together."""
    recent_calls: list[str] = field(default_factory=list)
    environment: dict[str, str] = field(default_factory=dict)
    instructions: list[str] | None = None
    setup: dict[tuple[str, str, int], StepSetup] = field(default_factory=dict)
    """Per (agent, user message, tool registry version): what its steps share until the registry changes."""
    cost: float = 0.0
    """Spent in this run; added to the session once, when the run ends."""
    preapproved: dict[str, str] = field(default_factory=dict)
    """Calls a `PreToolUse` hook allowed, by call id: what they would ask is answered."""
    stop_hooks: int = 0
    """How many times a `Stop` hook kept the agent going in this run."""

    @property
    def history(self) -> History:
        return self.log.history
