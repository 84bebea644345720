"""Glob patterns as the glob and grep tools read them.

`*` and `?` stay within one path segment, `**` crosses segments, `[abc]` is a class and `{a,b}` an
alternative. A pattern without `/` matches a file's name at any depth (`*.py`); a pattern with `/` matches
the path from the searched folder (`src/**/test_*.py`), and a leading `/` anchors a name there (`/*.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath


def expand_braces(pattern: str) -> list[str]:
    """`*.{py,ipynb}` → `*.py`, `*.ipynb` (innermost braces first, so nesting works)."""
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    return [expanded for alt in match.group(1).split(",")
            for expanded in expand_braces(pattern[: match.start()] + alt + pattern[match.end():])]


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "^", "]") else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def glob_matcher(pattern: str) -> Callable[[PurePosixPath], bool]:
    """A test for paths relative to the searched folder."""
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    by_name: list[re.Pattern[str]] = []
    by_path: list[re.Pattern[str]] = []
    for option in expand_braces(pattern):
        if "/" in option.rstrip("/"):
            by_path.append(re.compile(_translate(option.lstrip("/")), re.S))
        else:
            by_name.append(re.compile(_translate(option.rstrip("/")), re.S))

    def matches(rel: PurePosixPath) -> bool:
        text = rel.as_posix()
        return (any(r.fullmatch(rel.name) for r in by_name)
                or any(r.fullmatch(text) for r in by_path))

    return matches


def split_absolute(pattern: str) -> tuple[str, str]:
    """`/data/raw/**/*.csv` → (`/data/raw`, `/**/*.csv`): the fixed folder in front of the first wildcard."""
    parts = PurePosixPath(pattern).parts
    fixed: list[str] = []
    for part in parts:
        if any(ch in part for ch in "*?[{"):
            break
        fixed.append(part)
    rest = parts[len(fixed):]
    if not rest:  # no wildcard at all: a folder to search, everything in it
        return str(PurePosixPath(*fixed)), "**"
    return str(PurePosixPath(*fixed)), "/" + "/".join(rest)  # anchored: `/data/*.csv` is not `/data/**/*.csv`
