"""Rules and rulesets: the data the permission engine decides with.

A ruleset is an ordered list and order is everything: the LAST rule whose permission and pattern both
match decides, with no notion of specificity, so a later `"*"` overrides an earlier specific rule.
Nothing matching means `ask`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from itertools import chain
from typing import Annotated, Any, Self, SupportsIndex

from pydantic import ValidatorFunctionWrapHandler, WrapValidator

from ..config.schema import ACTIONS, Action
from ..errors import ConfigError
from .decider import ONE_ALTERNATION, Chain, Decider
from .rule import Grant, Rule  # noqa: F401  (Grant: named from here since rules and grants lived together)
from .wildcard import compile_pattern, wildcard_match

EDIT_TOOLS = frozenset({"edit", "write", "patch", "multiedit"})
"""Tools that all change files and are therefore governed by the one `edit` permission."""


class Ruleset(list[Rule]):
    """A list of rules that remembers, per permission, how to find its deciding rule quickly.

    Evaluation is a hot path (every tool call, every pattern, every pending request after an "always"), and
    the loop merges the agent's and the session's rules anew at every step. So each ruleset keeps a
    `Decider` per permission, and a merge remembers the rulesets it was made of: once it is large, it is
    decided part by part, through deciders each part built once. Any change to a list drops what it
    remembered, and a merge whose part changed since stops relying on that part.
    """

    __slots__ = ("_for", "_last", "_parts", "_version", "_views")

    def __init__(self, rules: Iterable[Rule] = (), *, parts: Sequence[Ruleset] = ()) -> None:
        super().__init__(rules)
        self._views: dict[str, Decider | Chain] = {}
        self._for: dict[str, list[Rule]] = {}
        self._last: dict[str, tuple[int, Rule]] | None = None
        self._version = 0
        self._parts = tuple((part, part._version) for part in parts)

    def for_permission(self, permission: str) -> Decider | Chain:
        """How this ruleset decides `permission`, built on first use."""
        view = self._views.get(permission)
        if view is None:
            if len(self) > ONE_ALTERNATION and self._parts_unchanged():
                view = Chain([part.for_permission(permission) for part, _ in self._parts])
            else:
                view = Decider(self.rules_for(permission))
            self._views[permission] = view
        return view

    def last_by_name(self) -> dict[str, tuple[int, Rule]]:
        """Per permission name written in a rule, its last rule and that rule's position."""
        if self._last is None:
            if self._parts and self._parts_unchanged():
                self._last, offset = {}, 0
                for part, _ in self._parts:
                    self._last.update({name: (offset + i, r) for name, (i, r) in part.last_by_name().items()})
                    offset += len(part)
            else:
                self._last = {r.permission: (i, r) for i, r in enumerate(self)}
        return self._last

    def rules_for(self, permission: str) -> list[Rule]:
        """The rules whose permission covers `permission`, in order (do not change the list).

        Only the few distinct permission names written in rules are matched against `permission`, not every
        rule, and the answer is remembered.
        """
        found = self._for.get(permission)
        if found is None:
            if self._parts_unchanged():
                found = [r for part, _ in self._parts for r in part.rules_for(permission)]
            else:
                names = [name for name in self.last_by_name() if _names_match(permission, name)]
                wanted = set(names)
                found = list(self) if len(names) == len(self.last_by_name()) else [
                    r for r in self if r.permission in wanted]
            self._for[permission] = found
        return found

    def _parts_unchanged(self) -> bool:
        return bool(self._parts) and all(part._version == version for part, version in self._parts)

    def __reduce__(self) -> tuple[type[Ruleset], tuple[list[Rule]]]:
        """Copies and pickles carry the rules only; what was remembered is rebuilt on use."""
        return (Ruleset, (list(self),))

    def _changed(self) -> None:
        self._views.clear()
        self._for.clear()
        self._last = None
        self._parts = ()
        self._version += 1

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

    # mypy holds `__iadd__` returning Self against list.__add__ returning a list; list itself does the same.
    def __iadd__(self, rules: Iterable[Rule]) -> Self:  # type: ignore[override,misc]
        self.extend(rules)
        return self


@lru_cache(maxsize=4096)
def _names_match(permission: str, rule_permission: str) -> bool:
    """Permission names are few, so whether a rule's permission covers one is worth remembering."""
    return wildcard_match(permission, rule_permission)


def as_ruleset(rules: Iterable[Rule]) -> Ruleset:
    return rules if isinstance(rules, Ruleset) else Ruleset(rules)


def _keep_ruleset(value: Any, handler: ValidatorFunctionWrapHandler) -> Ruleset:
    """A Ruleset is kept as it is, with what it remembered: revalidating it would copy 100,000 rules at
    every model built from it and rebuild every decider."""
    if isinstance(value, Ruleset):
        return value
    return as_ruleset(handler(value))


RulesetField = Annotated[list[Rule], WrapValidator(_keep_ruleset)]
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
    """Concatenation in order: a later ruleset overrides an earlier one under last-match-wins.

    The result remembers the rulesets it was made of (a merge's own parts, flattened), so what each part
    worked out is reused however often it is merged again.
    """
    parts: list[Ruleset] = []
    for ruleset in rulesets:
        if isinstance(ruleset, Ruleset) and ruleset._parts_unchanged():
            parts.extend(part for part, _ in ruleset._parts)
        elif ruleset:
            parts.append(as_ruleset(ruleset))
    return Ruleset(chain.from_iterable(parts), parts=[p for p in parts if p])


def disabled(tool_names: Iterable[str], ruleset: Iterable[Rule]) -> set[str]:
    """The tools not to offer the model at all: the last rule for their permission denies everything.

    Patterns are ignored when picking that rule, so `{bash: {"*": deny, "echo *": allow}}` keeps bash
    offered and leaves the decision to call time.
    """
    last_by_name = as_ruleset(ruleset).last_by_name()
    out: set[str] = set()
    for tool in tool_names:
        permission = "edit" if tool in EDIT_TOOLS else tool
        found = [entry for name, entry in last_by_name.items() if _names_match(permission, name)]
        last = max(found, key=lambda entry: entry[0])[1] if found else None
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
    rules: list[Rule] = []
    for name, value in mapping.items():
        permission = str(name)
        if isinstance(value, Mapping):
            for pattern, action in value.items():
                if action not in ACTIONS:  # the key path is worked out only for the error
                    _action(action, source, f"{key_prefix}.{_key(permission)}.{_key(str(pattern))}")
                rules.append(Rule(permission=permission, pattern=expand_home(str(pattern)), action=action))
        else:
            rules.append(Rule(permission=permission, pattern="*",
                              action=_action(value, source, f"{key_prefix}.{_key(permission)}")))
    return Ruleset(rules)


def expand_home(pattern: str) -> str:
    if not pattern.startswith(("~", "$HOME")):
        return pattern
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


NAMED_ONLY = frozenset({"agent_config", "git_internals", "network"})
"""Permissions decided only by rules that name them exactly: writes to the files that steer the agents or
make git run code later. A rule for every permission does not count for them."""


def deciding_rules(permission: str, rules: Ruleset) -> Ruleset:
    """The rules that can decide `permission`: all of them, or for a `NAMED_ONLY` one those naming it."""
    if permission not in NAMED_ONLY:
        return rules
    return Ruleset(r for r in rules.rules_for(permission) if r.permission == permission)  # few, not all rules
