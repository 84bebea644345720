"""One rule, and one "always" grant: the values the permission engine decides with (`rules.py` orders them)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..config.schema import Action


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
