"""Whether a new permission ruleset allows anything the old one did not.

Rulesets are ordered and the last matching rule decides, so "more permissive" cannot be read off rule by
rule. The check here is sound rather than clever: it finds an edit that turns the old list into the new one
(rules paired by permission and pattern, in order, as a diff pairs lines), and accepts the change only when
every step of that edit is one that can never make any decision more permissive (deny < ask < allow):

- a paired rule whose action became stricter (allow → ask → deny);
- an `allow` rule removed (its calls fall to an earlier rule, or to "nothing matches: ask");
- an `ask` rule removed with no `allow` before it that might match the same calls;
- a `deny` rule inserted anywhere;
- an `ask` rule inserted with no `deny` before it that might match the same calls.

Each step alone is a tightening, so a sequence of them is. Any other step (an action made looser, a deny
removed, an allow inserted, an ask that may shadow an earlier deny) is reported as a loosening, whether or
not some later rule happens to cancel it: a false alarm costs the person a click, a missed loosening costs
the sandbox. Whether two wildcard patterns can match a common call is not worked out either: they are
assumed to, unless both are plain text and differ.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}


class RuleLike(Protocol):
    """A permission rule as the engine holds it (`permission.Rule`); read-only here."""

    @property
    def permission(self) -> str: ...
    @property
    def pattern(self) -> str: ...
    @property
    def action(self) -> str: ...


@dataclass(frozen=True)
class RuleChange:
    """One step of the edit that may make a decision more permissive."""

    permission: str
    pattern: str
    before: str | None
    """The old rule's action; None for a rule added."""
    after: str | None
    """The new rule's action; None for a rule removed."""

    def how(self) -> str:
        if self.before is None:
            return f"{self.after} added"
        if self.after is None:
            return f"{self.before} rule removed"
        return f"{self.before} → {self.after}"

    def describe(self) -> str:
        return f"{self.permission} {self.pattern!r}: {self.how()}"


def loosened_rules(old: Sequence[RuleLike], new: Sequence[RuleLike]) -> list[RuleChange]:
    """The steps from `old` to `new` that may allow more; empty when `new` is at least as strict everywhere."""
    keys_old = [(r.permission, r.pattern) for r in old]
    keys_new = [(r.permission, r.pattern) for r in new]
    found: list[RuleChange] = []
    matcher = difflib.SequenceMatcher(a=keys_old, b=keys_new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for a, b in zip(old[i1:i2], new[j1:j2], strict=True):
                if STRICTNESS[b.action] < STRICTNESS[a.action]:
                    found.append(RuleChange(a.permission, a.pattern, a.action, b.action))
            continue
        for index in range(i1, i2):  # removed
            rule = old[index]
            if rule.action == "deny" or (rule.action == "ask" and _shadowed(rule, old[:index], "allow")):
                found.append(RuleChange(rule.permission, rule.pattern, rule.action, None))
        for index in range(j1, j2):  # inserted
            rule = new[index]
            if rule.action == "allow" or (rule.action == "ask" and _shadowed(rule, new[:index], "deny")):
                found.append(RuleChange(rule.permission, rule.pattern, None, rule.action))
    return found


def _shadowed(rule: RuleLike, before: Sequence[RuleLike], action: str) -> bool:
    """Whether a rule before `rule` with `action` might match one of its calls.

    For a removal the old list's actions are the ones to look at: the paired rules' changes are applied
    first, and a change that passes only ever makes an `allow` stricter, so it cannot add one.
    """
    return any(r.action == action and _may_overlap(r.permission, rule.permission)
               and _may_overlap(r.pattern, rule.pattern) for r in before)


def _may_overlap(a: str, b: str) -> bool:
    if any(c in a or c in b for c in "*?"):
        return True
    return a == b
