"""Rules and rulesets: the data the permission engine decides with.

A ruleset is an ordered list and order is everything: the LAST rule whose permission and pattern both
match decides, with no notion of specificity, so a later `"*"` overrides an earlier specific rule.
Nothing matching means `ask`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Annotated, Any, Self, SupportsIndex

from pydantic import AfterValidator, BaseModel, ConfigDict

from ..config.schema import ACTIONS, Action
from ..errors import ConfigError
from .wildcard import compile_pattern, pattern_source, wildcard_match

Matcher = Callable[[str], re.Match[str] | None]

EDIT_TOOLS = frozenset({"edit", "write", "patch", "multiedit"})
"""Tools that all change files and are therefore governed by the one `edit` permission."""


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


class Ruleset(list[Rule]):
    """A list of rules that remembers, per permission, how to find its deciding rule in one step.

    Evaluation is a hot path (every tool call, every pattern, every pending request after an "always").
    Scanning 200 rules and matching two wildcards each costs tens of microseconds; the per-permission
    `Decider` makes it one regular-expression match. Any change to the list drops the cache.
    """

    __slots__ = ("_views",)

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        super().__init__(rules)
        self._views: dict[str, Decider] = {}

    def for_permission(self, permission: str) -> Decider:
        """How this ruleset decides `permission`, built on first use."""
        view = self._views.get(permission)
        if view is None:
            view = self._views[permission] = Decider([r for r in self if _names_match(permission, r.permission)])
        return view

    def __reduce__(self) -> tuple[type[Ruleset], tuple[list[Rule]]]:
        """Copies and pickles carry the rules only; what was remembered is rebuilt on use."""
        return (Ruleset, (list(self),))

    def _changed(self) -> None:
        self._views.clear()

    def append(self, rule: Rule) -> None:
        super().append(rule)
        self._changed()

    def extend(self, rules: Iterable[Rule]) -> None:
        super().extend(rules)
        self._changed()

    def insert(self, index: SupportsIndex, rule: Rule) -> None:
        super().insert(index, rule)
        self._changed()

    def remove(self, rule: Rule) -> None:
        super().remove(rule)
        self._changed()

    def pop(self, index: SupportsIndex = -1) -> Rule:
        self._changed()
        return super().pop(index)

    def clear(self) -> None:
        super().clear()
        self._changed()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        super().sort(*args, **kwargs)
        self._changed()

    def reverse(self) -> None:
        super().reverse()
        self._changed()

    def __setitem__(self, index: Any, value: Any) -> None:
        super().__setitem__(index, value)
        self._changed()

    def __delitem__(self, index: Any) -> None:
        super().__delitem__(index)
        self._changed()

    def __iadd__(self, rules: Iterable[Rule]) -> Self:  # type: ignore[override]
        self.extend(rules)
        return self


class Decider:
    """The rules of one permission, ready to pick the last one whose pattern matches.

    Rules before the newest catch-all (`*`) can never decide, so they are dropped. The rest become one
    alternation, newest first, each rule a capturing group; a full match's `lastindex` names the rule.
    """

    __slots__ = ("_fallback", "_match", "_specific")

    def __init__(self, rules: list[Rule]) -> None:
        last_star = max((i for i, r in enumerate(rules) if r.pattern == "*"), default=-1)
        self._fallback = rules[last_star] if last_star >= 0 else None
        self._specific = tuple(reversed(rules[last_star + 1:]))
        source = "|".join(f"({pattern_source(r.pattern)})" for r in self._specific)
        self._match = _compile_alternation(source) if self._specific else None

    def decide(self, text: str) -> Rule | None:
        """The last rule matching `text` (backslashes already turned into `/`), or None."""
        if self._match is not None:
            found = self._match(text)
            if found is not None:
                return self._specific[found.lastindex - 1]  # type: ignore[operator]
        return self._fallback


@lru_cache(maxsize=256)
def _compile_alternation(source: str) -> Matcher:
    """Rebuilt rulesets (one per loop step) usually have the same rules: compile each alternation once."""
    return re.compile(source, re.S).fullmatch


@lru_cache(maxsize=4096)
def _names_match(permission: str, rule_permission: str) -> bool:
    """Permission names are few, so whether a rule's permission covers one is worth remembering."""
    return wildcard_match(permission, rule_permission)


def as_ruleset(rules: Iterable[Rule]) -> Ruleset:
    return rules if isinstance(rules, Ruleset) else Ruleset(rules)


RulesetField = Annotated[list[Rule], AfterValidator(as_ruleset)]
"""The type of a ruleset field on a model: validates as a list and keeps the per-permission cache."""


def evaluate(permission: str, pattern: str, *rulesets: Iterable[Rule]) -> Rule:
    """The rule that decides `permission` on `pattern`: the last matching one, else `ask`."""
    text = pattern.replace("\\", "/") if "\\" in pattern else pattern
    for ruleset in reversed(rulesets):
        if isinstance(ruleset, Ruleset):
            rule = ruleset.for_permission(permission).decide(text)
            if rule is not None:
                return rule
            continue
        for rule in reversed(ruleset if isinstance(ruleset, list | tuple) else list(ruleset)):
            if _names_match(permission, rule.permission) and (
                rule.pattern == "*" or compile_pattern(rule.pattern).fullmatch(text) is not None
            ):
                return rule
    return Rule(permission=permission, pattern="*", action="ask")


def merge(*rulesets: Iterable[Rule]) -> Ruleset:
    """Concatenation in order: a later ruleset overrides an earlier one under last-match-wins."""
    return Ruleset(rule for ruleset in rulesets for rule in ruleset)


def disabled(tool_names: Iterable[str], ruleset: Iterable[Rule]) -> set[str]:
    """The tools not to offer the model at all: the last rule for their permission denies everything.

    Patterns are ignored when picking that rule, so `{bash: {"*": deny, "echo *": allow}}` keeps bash
    offered and leaves the decision to call time.
    """
    rules = list(ruleset)
    out: set[str] = set()
    for tool in tool_names:
        permission = "edit" if tool in EDIT_TOOLS else tool
        last = next((r for r in reversed(rules) if wildcard_match(permission, r.permission)), None)
        if last is not None and last.pattern == "*" and last.action == "deny":
            out.add(tool)
    return out


def from_config(
    mapping: Mapping[str, Any] | str | None, *, source: str | None = None, key_prefix: str = "permission"
) -> Ruleset:
    """Rules from the config form, in the order written.

    `{edit: deny}` is one rule with pattern `*`; `{bash: {"ls *": allow}}` one rule per entry; a bare
    `"deny"` stands for `{"*": "deny"}`. `~`, `~/…` and a leading `$HOME` in patterns become the home
    directory.

    Raises:
        ConfigError: an action is not allow, ask or deny (names the key path and, given, the file).
    """
    if mapping is None:
        return Ruleset()
    if isinstance(mapping, str):
        return Ruleset([Rule(permission="*", pattern="*", action=_action(mapping, source, key_prefix))])
    if not isinstance(mapping, Mapping):
        raise ConfigError(source, key=key_prefix, hint=_shape_hint(mapping))
    rules = Ruleset()
    for name, value in mapping.items():
        permission = str(name)
        key = f"{key_prefix}.{_key(permission)}"
        if isinstance(value, Mapping):
            for pattern, action in value.items():
                rules.append(Rule(permission=permission, pattern=expand_home(str(pattern)),
                                  action=_action(action, source, f"{key}.{_key(str(pattern))}")))
        else:
            rules.append(Rule(permission=permission, pattern="*", action=_action(value, source, key)))
    return rules


def expand_home(pattern: str) -> str:
    home = os.path.expanduser("~")
    if pattern == "~":
        return home
    if pattern.startswith("~/"):
        return home + pattern[1:]
    if pattern.startswith("$HOME"):
        return home + pattern[len("$HOME"):]
    return pattern


def _action(value: Any, source: str | None, key: str) -> Action:
    if value in ACTIONS:
        return value  # type: ignore[no-any-return]
    raise ConfigError(source, key=key, hint=f"{value!r} is not one of {', '.join(ACTIONS)}")


def _shape_hint(value: Any) -> str:
    return (f"expected an action ({', '.join(ACTIONS)}) or a mapping such as "
            f"{{bash: {{\"ls *\": allow}}}}, got {type(value).__name__}")


def _key(segment: str) -> str:
    """A key path segment, quoted when it holds anything but name characters."""
    if segment and all(c.isalnum() or c in "_-" for c in segment):
        return segment
    return '"' + segment.replace('"', '\\"') + '"'
