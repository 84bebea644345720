"""Rules and rulesets: the data the permission engine decides with.

(The evaluation functions are added below by the permission engine work.)
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Action = Literal["allow", "ask", "deny"]
ACTIONS: tuple[Action, ...] = ("allow", "ask", "deny")


class Rule(BaseModel):
    """One line of a ruleset: for `permission` calls whose pattern matches `pattern`, do `action`."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    permission: str
    pattern: str
    action: Action


class Grant(BaseModel):
    """An "always" approval a person gave: allows `permission` on `pattern`, for `agent` only,
    within the session tree it was given in."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    agent: str
    permission: str
    pattern: str

    def rule(self) -> Rule:
        return Rule(permission=self.permission, pattern=self.pattern, action="allow")
