"""What an agent is: an identity, not a process."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..permission.rules import RulesetField

Mode = Literal["primary", "subagent", "all"]


class AgentInfo(BaseModel):
    """A name, a persona, a permission ruleset, an optional model, sampling settings and a step limit.

    One loop serves every agent; an agent only changes what that loop is told and allowed to do.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """The id: what `%%agent --agent`, `@name`, the task tool and stored messages select the agent by."""
    display_name: str | None = None
    """What listings show instead of the id (config `name`); the id still selects the agent."""
    description: str = ""
    mode: Mode = "all"
    """primary agents answer the person; subagents run in child sessions; all can do both."""
    native: bool = False
    """Built in, as opposed to defined in config or a markdown file."""
    hidden: bool = False
    """Not listed and not offered to the task tool (compaction, title, summary)."""
    color: str | None = None
    model: str | None = None
    """`provider/model`, or None for the session's model."""
    prompt: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    steps: int | None = None
    """At most this many model calls per prompt; the last one must answer in text."""
    permission: RulesetField = Field(default_factory=list)
    """The full ruleset: defaults, the agent's own rules, global config rules, the agent's config rules."""
    tools: dict[str, bool] = Field(default_factory=dict)
    """Tool switches by name or wildcard; False keeps a tool from being offered at all."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Passed to the provider with every request of this agent (e.g. thinking budgets)."""

    @property
    def label(self) -> str:
        """The name to show a person."""
        return self.display_name or self.name

    @property
    def listed_as(self) -> str:
        """How a listing names the agent: its display name, and the key that selects it when they differ."""
        return self.name if self.label == self.name else f"{self.label} ({self.name})"

    @property
    def is_primary(self) -> bool:
        return self.mode in ("primary", "all")

    @property
    def is_subagent(self) -> bool:
        return self.mode in ("subagent", "all")
