"""Paths in an ask as the person names them.

Rules match a path relative to the repository (`play/notes.md`), so that is what a permission's pattern must
stay. A person working in a notebook in `play/` names the same file `notes.md`, as the tool's card does. The
ask carries both: its patterns for the rules, and under `metadata["named"]` each pattern that reads
differently from the working folder, for the prompt, its record and the terminal.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

NAMED = "named"
"""The metadata key of an ask's pattern → the path as named from the working folder."""

PATH_PERMISSIONS = frozenset({"edit", "read", "list", "git_internals", "agent_config"})
"""Permissions whose patterns are paths relative to the repository (or absolute, outside it)."""


def named_from(pattern: str, directory: Path, root: Path) -> str:
    """`pattern`, a path relative to `root`, named from `directory`: `play/notes.md` from `play/` is `notes.md`,
    `src/x.py` is `../src/x.py`. An absolute path or the catch-all stays as it is."""
    if pattern == "*" or PurePosixPath(pattern).is_absolute():
        return pattern
    return Path(os.path.relpath(root / pattern, directory)).as_posix()


def with_named_paths(permission: str, patterns: Sequence[str], always: Sequence[str], metadata: dict[str, Any],
                     directory: Path, root: Path) -> dict[str, Any]:
    """`metadata`, with `named` added when a path pattern reads differently from the working folder (a notebook
    below the repository's root); unchanged otherwise."""
    if permission not in PATH_PERMISSIONS or NAMED in metadata:
        return metadata
    here, top = directory.resolve(), root.resolve()
    named = {p: named_from(p, here, top) for p in dict.fromkeys([*patterns, *always])}
    differing = {p: n for p, n in named.items() if n != p}
    return {**metadata, NAMED: differing} if differing else metadata
