"""Reading and writing text files the way write and edit need: exactly, one change at a time.

Text is read and written with its line endings untouched (a CRLF file stays CRLF). Changes to one file are
serialized: two edits of the same file in one step (the model may call tools in parallel) would otherwise
both read the old text, and the second write would silently undo the first.
"""

from __future__ import annotations

import asyncio
import difflib
import weakref
from pathlib import Path

from ...errors import ToolError

_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()


def file_lock(path: Path) -> asyncio.Lock:
    """The lock every change to `path` holds from reading the old text to writing the new."""
    key = str(path)
    lock = _locks.get(key)
    if lock is None:
        lock = asyncio.Lock()
        _locks[key] = lock
    return lock


def read_text(path: Path, title: str) -> str:
    try:
        with path.open(encoding="utf-8", newline="") as f:
            return f.read()
    except UnicodeDecodeError:
        raise ToolError(f"{title} is not UTF-8 text, so it cannot be edited safely here. Change it with a "
                        "program that understands its encoding (through bash), or write a new file.") from None


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write(text)


def unified_diff(name: str, old: str, new: str) -> str:
    """A unified diff from `a/<name>` to `b/<name>`, as a person reviews it before approving."""
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=f"a/{name}", tofile=f"b/{name}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def diff_counts(diff: str) -> tuple[int, int]:
    """(lines added, lines removed) in a unified diff."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed
