"""Reading and writing text files the way write and edit need: exactly, one change at a time, to the file
that was checked.

Text is read and written with its line endings untouched (a CRLF file stays CRLF). Changes to one file are
serialized: two edits of the same file in one step (the model may call tools in parallel) would otherwise
both read the old text, and the second write would silently undo the first. The file is opened once
(`safeopen`), and its permission, its old text and the new write all go through that one descriptor.
"""

from __future__ import annotations

import asyncio
import difflib
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from ...errors import ToolError
from ..context import ToolContext
from .access import Outside, locate
from .safeopen import Opened, PathChanged, open_path

_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()


def file_lock(path: Path) -> asyncio.Lock:
    """The lock every change to `path` holds from reading the old text to writing the new."""
    key = str(path)
    lock = _locks.get(key)
    if lock is None:
        lock = asyncio.Lock()
        _locks[key] = lock
    return lock


@asynccontextmanager
async def changing(ctx: ToolContext, raw: str) -> AsyncIterator[Opened]:
    """The file `raw` names, opened once for a change and held under its lock until the change is written.

    Outside the project, `external_directory` is asked before anything there is opened, and again if the
    opened file turns out to be somewhere else (a link flipped meanwhile); only then do the callers say
    what is there (`require_file`, `read_text`), so a refusal reveals nothing about the place.
    """
    written, resolved = locate(ctx, raw)
    outside = Outside(ctx, folders=False)
    await outside.check_given(written, resolved)
    async with file_lock(resolved):
        opened = await asyncio.to_thread(open_path, resolved, for_write=True)
        try:
            await outside.check(opened.path)
            yield opened
        finally:
            opened.close()


def require_file(opened: Opened, title: str, *, missing_ok: bool = False) -> None:
    """Raise the error the model reads when `opened` is not a regular file that can be changed.

    Raises:
        ToolError: a directory, a device or FIFO, a missing file (unless `missing_ok`), or an OS refusal.
    """
    kind = opened.kind
    if kind == "file" or (kind == "missing" and missing_ok):
        return
    if kind == "dir":
        raise ToolError(f"{title} is a directory, not a file. Give the path of a file.")
    if kind == "other":
        raise ToolError(f"{title} is not a regular file (a device, FIFO or socket), so it is left alone.")
    if kind == "missing":
        raise ToolError(f"File not found: {title}. Check the path (glob can find it), or create the file with "
                        "write (or edit with an empty old_string).")
    raise ToolError(open_error(opened, title))


def open_error(opened: Opened, title: str) -> str:
    """What the model reads when the OS would not open a path it was allowed to look at."""
    error = opened.error
    if isinstance(error, PathChanged):
        return (f"{title} changed while it was being opened ({error.strerror}). Nothing was read or written; "
                "call the tool again.")
    why = error.strerror if error is not None and error.strerror else "it could not be opened"
    return f"Cannot open {title}: {why}."


def read_text(opened: Opened, title: str) -> str:
    """The text of the opened file, or "" for a file still to be made; line endings kept as they are."""
    if opened.kind == "missing":
        return ""
    try:
        return opened.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{title} is not UTF-8 text, so it cannot be edited safely here. Change it with a "
                        "program that understands its encoding (through bash), or write a new file.") from None


async def write_text(opened: Opened, text: str, title: str) -> None:
    """Write `text` to the file that was checked, or make it; never to whatever its name points at now.

    Raises:
        ToolError: the file moved or appeared after the check, or the OS refused; nothing was written.
    """
    try:
        await asyncio.to_thread(opened.write_bytes, text.encode("utf-8"))
    except PathChanged as exc:
        raise ToolError(f"Nothing was written: {title} changed after it was checked ({exc.strerror}). Read it "
                        "again and call the tool again.") from None
    except OSError as exc:
        raise ToolError(f"Could not write {title}: {exc.strerror or exc}.") from None


def unified_diff(name: str, old: str, new: str) -> str:
    """A unified diff from `a/<name>` to `b/<name>`, as a person reviews it before approving. A name that leaves
    the working folder (`../.opencode/plans/x.md`, an absolute path) is shown as it is, without git's `a/`
    and `b/`, which would make it a path no one would write (`a/../.opencode/plans/x.md`)."""
    plain = name.startswith(("../", "/")) or name == ".."
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=name if plain else f"a/{name}", tofile=name if plain else f"b/{name}")
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
