"""What a sandboxed command may read outside the project, from the caller's `external_directory` rules.

The bash tool asks `external_directory` for every outside path a line names, but a program finds paths the
line never names: `grep -R` and `find -L` follow a link in the project out, a script opens `/home/x/.ssh`. So
when the rules deny the agent an outside folder no rule names (`external_directory: deny`, or `{"*": deny,
...}`), the OS sandbox shows the command only the project, the system's folders, the Python installation and
the tool-output and shared temp folders, and beside them the outside folders the rules allow by name (less the
folders a rule denies inside them). Everything else outside the project is simply not there, whatever
program looks.

Where such a folder would be asked about (`ask`, the default) or allowed, the whole file system stays
readable: programs read their data and settings from many places (`/data`, `~/.gitconfig`, a conda
environment under `/opt`), and a script that reads `/data/train.csv` must not break because no line named
it. An ask then guards what a line names (the bash tool asks for each outside path it sees, and the person's
"once" is honoured for that call); a read no line names is not refused. Denying is how to make reads outside
the project fail by effect.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..permission.rules import Rule, evaluate

PERMISSION = "external_directory"
ANYWHERE = "/opencode-nb-a-folder-no-rule-names/*"
"""Stands for an outside folder no rule names: what the rules say of it is what they say of "outside"."""
MAX_SPLIT = 256
"""An allowed folder holding a denied one is shown entry by entry; past this many entries it is not shown."""


def shown_outside(rules: Iterable[Rule], approved: Sequence[Path] = ()) -> tuple[Path, ...] | None:
    """None when reads outside the project are allowed; else the outside folders the command may read.

    Args:
        rules: the caller's rules for `external_directory` in deciding order, its "always" grants last.
        approved: folders this call was allowed (the line named them and the person or a rule said yes).
    """
    rules = [r for r in rules]
    if evaluate(PERMISSION, ANYWHERE, rules).action != "deny":
        return None
    shown: list[Path] = []
    for rule in rules:
        folder = _folder(rule.pattern)
        if rule.action != "allow" or folder is None or folder in shown:
            continue
        if evaluate(PERMISSION, rule.pattern, rules).action == "allow" and folder.is_dir():
            shown.append(folder)
    for folder in approved:
        real = Path(os.path.realpath(folder))
        if real.is_dir() and real not in shown:
            shown.append(real)
    denied = [f for r in rules if r.action != "allow" and (f := _folder(r.pattern)) is not None]
    kept: list[Path] = []
    for folder in shown:
        for part in _without(folder, [d for d in denied if folder in d.parents]):
            if part not in kept:
                kept.append(part)
    return tuple(kept)


def _without(folder: Path, denied: list[Path]) -> list[Path]:
    """`folder` as what to bind so that the `denied` folders inside it are not there: its entries but the
    way to each, recursively. A folder too large to list that way is not shown at all."""
    if not denied:
        return [folder]
    if any(d == folder for d in denied):
        return []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    if len(entries) > MAX_SPLIT:
        return []
    parts: list[Path] = []
    for entry in entries:
        inside = [d for d in denied if d == entry or entry in d.parents]
        if not inside:
            parts.append(entry)
        elif entry.is_dir() and not entry.is_symlink():
            parts += _without(entry, inside)
    return parts


def _folder(pattern: str) -> Path | None:
    """The folder an allow pattern names (`/data/*`, `/data`), or None for one that names no single folder."""
    text = pattern[:-2] if pattern.endswith("/*") else pattern
    if not text.startswith("/") or any(c in text for c in "*?") or text == "/":
        return None
    return Path(os.path.realpath(text))
