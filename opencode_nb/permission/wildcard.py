"""Wildcard patterns of permission rules.

`*` matches any run of characters (none included, `/` and newlines included), `?` exactly one; every
other character is literal. A trailing ` *` is optional, so `ls *` also matches the bare `ls` but not
`lstmeval`. Backslashes count as `/` on both sides so Windows-style paths match the same rules.
Patterns are compiled once and cached: every tool call evaluates many of them.
"""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern_source(pattern), re.S)


@lru_cache(maxsize=4096)
def pattern_source(pattern: str) -> str:
    """The regular expression `pattern` stands for, without capturing groups so that sources can be
    joined into one alternation whose matching branch is told by `lastindex`."""
    pattern = pattern.replace("\\", "/")
    optional_tail = pattern.endswith(" *")
    if optional_tail:
        pattern = pattern[:-2]
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    if optional_tail:
        body += "(?: .*)?"
    return body


def wildcard_match(text: str, pattern: str) -> bool:
    """Whether the whole of `text` matches `pattern`."""
    if pattern == "*":
        return True
    return compile_pattern(pattern).fullmatch(text.replace("\\", "/")) is not None
