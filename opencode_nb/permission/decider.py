"""How the rules of one permission find their deciding rule quickly, however many there are.

The deciding rule is the last one whose pattern matches. A few hundred rules become one regular expression:
an alternation, newest rule first, each rule a capturing group, so one `fullmatch` names the newest
matching rule by its `lastindex`. That does not scale: Python's `re` compiles about ten thousand branches
a second and a failing match tries every branch, so 100,000 rules took seconds to compile and half a second
to rule out.

Past `ONE_ALTERNATION` rules they are indexed by their literal prefix, the text before a pattern's first
wildcard (`git push *` → `git push`). A text can only match rules whose prefix it starts with, so a check
looks up each prefix length that occurs (a handful) and tries only those buckets, each an alternation
compiled the first time it is needed and cut into chunks so no one expression grows large. Among the
buckets' matches the one written last still wins: every rule keeps its position in the list.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from .wildcard import pattern_source

if TYPE_CHECKING:
    from .rule import Rule

Matcher = Callable[[str], re.Match[str] | None]

ONE_ALTERNATION = 256
"""Up to this many rules, one alternation decides: one match, and the compiled form is shared by every
ruleset holding the same rules (the loop merges rulesets anew at every step)."""

CHUNK = 256
"""The most rules one compiled alternation of a prefix bucket holds."""


class Decider:
    """The rules of one permission, in order, ready to pick the last one whose pattern matches a text.

    Rules before the newest catch-all (`*`) can never decide, so they are dropped; the catch-all decides
    when nothing after it matches.
    """

    __slots__ = ("_fallback", "_index", "_match", "_newest_first")

    def __init__(self, rules: Sequence[Rule]) -> None:
        last_star = max((i for i, r in enumerate(rules) if r.pattern == "*"), default=-1)
        self._fallback = rules[last_star] if last_star >= 0 else None
        specific = rules[last_star + 1:]
        self._match: Matcher | None = None
        self._index: _PrefixIndex | None = None
        if len(specific) > ONE_ALTERNATION:
            self._index = _PrefixIndex(specific)
        elif specific:
            # Inlined rather than an `_Alternation`: this is the common case, and the hottest path.
            self._newest_first = tuple(reversed(specific))
            self._match = _compile_alternation("|".join(f"({pattern_source(r.pattern)})" for r in self._newest_first))

    def decide(self, text: str) -> Rule | None:
        """The last rule matching `text` (backslashes already turned into `/`), or None."""
        if self._match is not None:
            found = self._match(text)
            if found is not None:
                return self._newest_first[found.lastindex - 1]  # type: ignore[operator]
        elif self._index is not None:
            rule = self._index.newest(text)
            if rule is not None:
                return rule
        return self._fallback


class Chain:
    """The deciders of consecutive rulesets read as one: the last one with an opinion decides.

    A merged ruleset is decided this way when it is large, so each part's decider, built once, serves
    every merge the part goes into.
    """

    __slots__ = ("_deciders",)

    def __init__(self, deciders: Sequence[Decider | Chain]) -> None:
        self._deciders = tuple(reversed(deciders))

    def decide(self, text: str) -> Rule | None:
        for decider in self._deciders:
            found = decider.decide(text)
            if found is not None:
                return found
        return None


def literal_prefix(pattern: str) -> str:
    """The text every match of `pattern` starts with: what comes before its first wildcard.

    A trailing ` *` is optional (`ls *` matches `ls`), so its space is not part of the prefix.
    """
    if "\\" in pattern:
        pattern = pattern.replace("\\", "/")
    if pattern.endswith(" *"):
        pattern = pattern[:-2]
    return pattern.partition("*")[0].partition("?")[0]


class _Alternation:
    """Rules as one alternation, newest first: the matching group with the lowest number is the newest.

    Compiled here, not through the shared cache: a bucket keeps its own, and a large ruleset's many buckets
    would push the small rulesets' alternations out of that cache.
    """

    __slots__ = ("_count", "_match", "rules")

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = rules
        self._count = len(rules)
        source = "|".join(f"({_source(r.pattern)})" for r in reversed(rules))
        self._match = re.compile(source, re.S).fullmatch

    def newest_index(self, text: str) -> int | None:
        """The index in `rules` of the newest rule matching `text`."""
        found = self._match(text)
        return None if found is None else self._count - found.lastindex  # type: ignore[operator]


class _Bucket:
    """The rules sharing one literal prefix, with their positions in the permission's list, compiled in
    chunks, newest chunk first."""

    __slots__ = ("_chunks",)

    def __init__(self, positions: list[int], rules: Sequence[Rule]) -> None:
        chunks = [positions[start:start + CHUNK] for start in reversed(range(0, len(positions), CHUNK))]
        self._chunks = [(chunk, _Alternation([rules[p] for p in chunk])) for chunk in chunks]

    def newest(self, text: str, after: int) -> tuple[int, Rule] | None:
        """The newest rule here matching `text`, if it comes after position `after`."""
        for positions, chunk in self._chunks:
            if positions[-1] <= after:
                return None
            index = chunk.newest_index(text)
            if index is not None:
                return (positions[index], chunk.rules[index]) if positions[index] > after else None
        return None


class _PrefixIndex:
    """Many rules, bucketed by literal prefix; a text is tried against the buckets of its own prefixes.

    Building the index only sorts positions by prefix: a bucket is compiled when a text first reaches it.
    """

    __slots__ = ("_buckets", "_compiled", "_lengths", "_rules")

    def __init__(self, rules: Sequence[Rule]) -> None:
        self._rules = rules
        self._buckets: dict[str, list[int]] = {}
        self._compiled: dict[str, _Bucket] = {}
        for position, rule in enumerate(rules):
            self._buckets.setdefault(literal_prefix(rule.pattern), []).append(position)
        self._lengths = sorted({len(prefix) for prefix in self._buckets})

    def newest(self, text: str) -> Rule | None:
        best: tuple[int, Rule] | None = None
        for length in self._lengths:
            if length > len(text):
                break
            prefix = text[:length]
            bucket = self._compiled.get(prefix)
            if bucket is None:
                positions = self._buckets.get(prefix)
                if positions is None:
                    continue
                bucket = self._compiled[prefix] = _Bucket(positions, self._rules)
            found = bucket.newest(text, best[0] if best is not None else -1)
            if found is not None:
                best = found
        return best[1] if best is not None else None


_source = pattern_source.__wrapped__
"""Uncached for buckets: each pattern of a large ruleset is turned into a regular expression only once."""


@lru_cache(maxsize=256)
def _compile_alternation(source: str) -> Matcher:
    """Rebuilt rulesets (one per loop step) usually hold the same rules: compile each alternation once."""
    return re.compile(source, re.S).fullmatch

