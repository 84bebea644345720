"""The managed policy's rules as the permission engine checks them: apart from every other rule, and first.

Last match wins among ordinary rules, so a rule written after the administrator's (an agent's own, an "always"
a person gave) would win over it. Checking the managed rules on their own, before the others are evaluated, is
what keeps their `deny` and `ask` in force: a managed deny refuses the call whatever follows it, and a managed
ask makes a person decide even when every other rule, grant or the unattended policy would allow.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from ..config.managed import Managed
from .rule import Rule
from .rules import Action, Ruleset, deciding_rules


class ManagedRules:
    """The rules of one managed file, ready to decide calls."""

    def __init__(self, managed: Managed) -> None:
        self.managed = managed
        self.path = managed.path

    @cached_property
    def rules(self) -> Ruleset:
        return Ruleset(Rule(permission=p, pattern=pattern, action=a) for p, pattern, a in self.managed.rules())

    @cached_property
    def strict(self) -> Ruleset:
        """The deny and ask rules alone: put after an agent's rules they turn tools off and make live python
        sandboxed, and a managed allow there would loosen what lower rules withhold."""
        return Ruleset([*(r for r in self.rules if r.action != "allow"), *self.own_file])

    @cached_property
    def own_file(self) -> list[Rule]:
        """The managed file is out of every agent's reach: writing it is denied, whatever else allows."""
        path = str(self.path)
        return [Rule(permission=name, pattern=path, action="deny") for name in ("edit", "agent_config")]

    @cached_property
    def deciding(self) -> Ruleset:
        """Every managed rule, the file's own protection last: decided by the engine's own deciders, so a managed
        rule matches exactly what the same rule matches anywhere else (and is compiled once, not per call)."""
        return Ruleset([*self.rules, *self.own_file])

    def decide(self, permission: str, patterns: Sequence[str]) -> tuple[Action | None, Rule | None]:
        """deny if a managed rule denies any pattern, ask if one asks any, else None (a managed allow is no
        opinion: the other rules decide)."""
        decider = deciding_rules(permission, self.deciding).for_permission(permission)
        found: tuple[Action | None, Rule | None] = (None, None)
        for pattern in patterns:
            rule = decider.decide(pattern.replace("\\", "/"))
            if rule is None:
                continue
            if rule.action == "deny":
                return "deny", rule
            if rule.action == "ask":
                found = ("ask", rule)
        return found
