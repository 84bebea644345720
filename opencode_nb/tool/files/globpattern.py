"""Glob patterns as the glob and grep tools read them.

`*` and `?` stay within one path segment, `**` crosses segments, `[abc]` is a class and `{a,b}` an
alternative. A pattern without `/` matches a file's name at any depth (`*.py`); a pattern with `/` matches
the path from the searched folder (`src/**/test_*.py`), and a leading `/` anchors a name there (`/*.py`).
A pattern that cannot be read (`[z-a]`, braces expanding to thousands of patterns) is a `ToolError` that
says what to write instead, raised before anything is searched.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath

from ...errors import ToolError

MAX_ALTERNATIVES = 256
"""Patterns one brace expression may expand to: `{a,b}` ten times over is already 1,024."""


def expand_braces(pattern: str) -> list[str]:
    """`*.{py,ipynb}` → `*.py`, `*.ipynb` (innermost braces first, so nesting works).

    Raises:
        ToolError: the braces expand to more than `MAX_ALTERNATIVES` patterns.
    """
    done: list[str] = []
    todo = [pattern]
    while todo:
        current = todo.pop()
        match = re.search(r"\{([^{}]*)\}", current)
        if not match:
            done.append(current)
            continue
        todo += [current[: match.start()] + alt + current[match.end():] for alt in reversed(match.group(1).split(","))]
        if len(done) + len(todo) > MAX_ALTERNATIVES:
            raise ToolError(f"Invalid glob pattern {pattern!r}: its braces expand to more than {MAX_ALTERNATIVES} "
                            "patterns. Use fewer alternatives, or run several searches.")
    return done


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            while pattern.startswith("**/", i):  # `**/**/` means `**/`; repeated, it would backtrack badly
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
            by_path.append(_compile(_translate(option.lstrip("/")), pattern))
        else:
            by_name.append(_compile(_translate(option.rstrip("/")), pattern))

    def matches(rel: PurePosixPath) -> bool:
        text = rel.as_posix()
        return (any(r.fullmatch(rel.name) for r in by_name)
                or any(r.fullmatch(text) for r in by_path))

    return matches


def _compile(source: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(source, re.S)
    except re.error as exc:
        hint = ("A range in [...] must go upwards, as in [a-z] or [0-9]." if "range" in exc.msg
                else "To match [ or ] literally, put it in a class of its own, such as [[].")
        raise ToolError(f"Invalid glob pattern {pattern!r}: {exc.msg}. {hint}") from None


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
