"""What a ruleset decides, said per permission, for a person reading it (`%agent permissions`).

Last match wins, so a rule's place says as much as its text: `question: deny` early in the built-in rules and
`question: allow` later in an agent's own leave question allowed, and a list of rules alone does not show it.
This reads a ruleset as `evaluate` decides it: per permission written in a rule, the decision for a call no
pattern singles out (the last catch-all pattern covering it, else ask), then the patterns that decide
otherwise, in the order they are checked; and per rule, the later rule that overrides it whatever the call,
if one does. A rule is only called overridden when that is certain (a later rule of the same or every
permission, with the same or every pattern); one that a wider pattern may cover for some calls is left in force.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..config.schema import Action
from .rule import Rule
from .rules import NAMED_ONLY
from .wildcard import wildcard_match


@dataclass(frozen=True)
class Otherwise:
    """A pattern that decides a permission otherwise than its catch-all."""

    pattern: str
    action: Action
    index: int
    """The rule's position in the ruleset it was read from (0-based)."""


@dataclass(frozen=True)
class Decision:
    """How one permission, as written in the rules, is decided."""

    permission: str
    """As written in a rule; `*` stands for every permission no other decision names."""
    action: Action
    """For a call no exception matches."""
    index: int | None
    """The position of the rule that gives `action`; None when no catch-all covers it (then it asks)."""
    exceptions: tuple[Otherwise, ...]
    """In ruleset order: of those matching a call, the last decides it."""
    named_only: bool
    """Only rules naming this permission count for it (a `*` rule does not reach it)."""


def covers(rule_permission: str, permission: str) -> bool:
    """Whether a rule written for `rule_permission` decides calls of `permission`."""
    if permission in NAMED_ONLY:
        return rule_permission == permission
    return wildcard_match(permission, rule_permission)


def decisions(rules: Sequence[Rule]) -> list[Decision]:
    """Per permission named in `rules` (in order of first mention), what decides it."""
    out = []
    for name in dict.fromkeys(r.permission for r in rules):
        covering = [(i, r) for i, r in enumerate(rules) if covers(r.permission, name)]
        base = next(((i, r) for i, r in reversed(covering) if r.pattern == "*"), None)
        start = base[0] if base is not None else -1
        later = [(i, r) for i, r in covering if i > start and r.pattern != "*"]
        exceptions = tuple(Otherwise(r.pattern, r.action, i) for n, (i, r) in enumerate(later)
                           if not any(o.pattern == r.pattern for _, o in later[n + 1:]))
        out.append(Decision(name, base[1].action if base is not None else "ask", start if base is not None else None,
                            exceptions, name in NAMED_ONLY))
    return out


def overridden_by(rules: Sequence[Rule]) -> list[int | None]:
    """For each rule, the position of a later rule that decides every call it would, or None."""
    out: list[int | None] = []
    for i, rule in enumerate(rules):
        later = (j for j in range(len(rules) - 1, i, -1) if _overrides(rules[j], rule))
        out.append(next(later, None))
    return out


def _overrides(later: Rule, earlier: Rule) -> bool:
    same_permission = later.permission == earlier.permission or (
        later.permission == "*" and earlier.permission not in NAMED_ONLY)
    return same_permission and later.pattern in ("*", earlier.pattern)
