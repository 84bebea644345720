"""Which program a command word runs: the name rules are written with.

`/bin/rm`, `/usr/bin/rm` and `./tools/rm` all run a program called rm, so rules see `rm`. A word whose
program cannot be known before the line runs has no name here (None) and the line asks a person: one that
comes from an expansion (`$x`, `$(...)`, `${x:-rm}`), and one the shell rewrites from the file system (an
unquoted glob, `/bin/r?`). A path to a symbolic link also names the program it points to (`ln -s /bin/rm
x; ./x` runs rm), so both names are checked.
"""

from __future__ import annotations

from pathlib import Path

from .words import Word


def program(word: Word) -> str | None:
    """The name of the program a command word runs, or None when it cannot be known before the line runs."""
    value = word.value
    if value is None or word.glob or not value or value.endswith("/"):
        return None
    return value.rsplit("/", 1)[-1]


def linked_program(value: str, cwd: Path | None) -> str | None:
    """The name of the program a path to a symbolic link really runs, when it differs from the link's name."""
    if "/" not in value or value.startswith("~"):
        return None
    path = Path(value)
    if not path.is_absolute():
        if cwd is None:
            return None
        path = cwd / path
    try:
        if not path.is_symlink():
            return None
        target = path.resolve().name
    except (OSError, RuntimeError):
        return None
    return target if target and target != path.name else None
