"""The ignore rules a snapshot goes by, frozen so that a turn cannot hide its own files from its undo.

Git reads `.gitignore` files and `.git/info/exclude` as they are on disk at each call. A turn that writes `*`
into one of them would make every file it creates afterwards untracked-and-ignored: never recorded, so
never removed by its undo (and the next turn's files neither). So the store never lets git read them: their
contents are kept here (`FrozenRules`), flattened into one file of patterns anchored at the project root, and
`ls-files` gets that file (`--exclude-from`) instead of `--exclude-standard`.

Which contents count: the ones the person left. At a turn's first snapshot (`fresh`), an ignore file whose
content differs from what the store saw at its last snapshot was changed between turns, by the person (or
their git): that content is adopted. A content the store saw at its last snapshot, i.e. one a turn left, is
not: the rules in force stay the earlier ones until the person changes the file again. Within a turn nothing
is ever adopted. The first snapshot of a store adopts what is there. Recording more than the person's rules
say is the safe way to be wrong (the size cap still bounds it).

An ignore file in a subfolder that no snapshot has listed yet (there before the store was made, or added by
the person between turns) is adopted from the listing at a turn's start (`adopt`); one a turn writes is
recorded, and so seen, before any later turn starts.

Flattening keeps git's meaning: a pattern of `a/b/.gitignore` without a slash matches at any depth below
`a/b` (`/a/b/**/name`), one with a slash is relative to `a/b` (`/a/b/pattern`); later lines win, so
`.git/info/exclude` comes first and deeper `.gitignore` files after shallower ones, as git ranks them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

IGNORE_NAME = ".gitignore"
PERSON_EXCLUDE = ".git/info/exclude"

Sources = dict[str, str | None]
"""Each ignore file by project path, with its content (None: not there, or not a plain file)."""


def translate(folder: str, text: str) -> list[str]:
    """The lines of the ignore file in `folder` ("" for the root, or `.git/info/exclude`'s) as patterns of
    the project root."""
    out = []
    for raw in text.splitlines():
        line = _strip_trailing(raw)
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        if not folder:
            out.append(("!" if negate else "") + line)
            continue
        dir_only = line.endswith("/")
        body = line.rstrip("/") if dir_only else line
        if not body:
            continue
        anchored = "/" in body
        pattern = f"/{folder}/{body.lstrip('/')}" if anchored else f"/{folder}/**/{body}"
        out.append(("!" if negate else "") + pattern + ("/" if dir_only else ""))
    return out


def _strip_trailing(line: str) -> str:
    """Trailing spaces are dropped unless the last one is escaped with a backslash, as git reads them."""
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        return stripped + " "
    return stripped


def flatten(sources: Sources) -> list[str]:
    """Every rule of `sources`, lowest precedence first."""
    lines = translate("", sources.get(PERSON_EXCLUDE) or "")
    gitignores = sorted((p for p in sources if p != PERSON_EXCLUDE and sources[p]),
                        key=lambda p: (p.count("/"), p))
    for path in gitignores:
        folder = path[: -len(IGNORE_NAME)].rstrip("/")
        lines += translate(folder, sources[path] or "")
    return lines


class FrozenRules:
    """The ignore files' contents in force, and the ones last seen, kept in `state_file` (JSON)."""

    def __init__(self, state_file: Path) -> None:
        self.state_file = state_file

    def rules(self, live: Sources, *, fresh: bool) -> list[str]:
        """The rules to snapshot by now; `fresh` at a turn's start, when the person's edits are adopted."""
        frozen, seen, known = self._load()
        if not known:
            frozen = dict(live)
        elif fresh:
            for path in {*live, *seen}:
                if live.get(path) != seen.get(path):
                    frozen[path] = live.get(path)
        self._save(frozen, seen)
        return flatten(frozen)

    def known(self) -> bool:
        """Whether any snapshot froze rules yet (before the first, every ignore file found is adopted)."""
        return self._load()[2]

    def adopt(self, found: Sources) -> list[str] | None:
        """Adopt the ignore files in `found` that no snapshot has seen: the rules to snapshot by now, None when
        none was new.

        `rules` only compares files the store already knows of, and the store knows a `.gitignore` in a
        subfolder only once a snapshot recorded it, so one there before the store was made, or one the person
        added between turns, would be recorded and marked seen without ever being adopted: what it ignores
        (a build folder) recorded at every step. The store calls this with the untracked ignore files its
        listing found at a turn's start or in its first snapshot, never within a turn."""
        frozen, seen, _ = self._load()
        new = {p: t for p, t in found.items() if p not in frozen and p not in seen}
        if not new:
            return None
        frozen.update(new)
        self._save(frozen, seen)
        return flatten(frozen)

    def saw(self, live: Sources) -> None:
        """What the ignore files held at the end of a snapshot: a later difference is someone else's edit."""
        frozen, _, _ = self._load()
        self._save(frozen, live)

    def paths(self) -> set[str]:
        frozen, seen, _ = self._load()
        return {*frozen, *seen}

    def _load(self) -> tuple[Sources, Sources, bool]:
        try:
            data = json.loads(self.state_file.read_text(encoding="utf-8"))
            return dict(data["frozen"]), dict(data["seen"]), True
        except (OSError, ValueError, KeyError, TypeError):
            return {}, {}, False

    def _save(self, frozen: Sources, seen: Sources) -> None:
        text = json.dumps({"frozen": frozen, "seen": seen}, sort_keys=True)
        try:
            if self.state_file.read_text(encoding="utf-8") == text:
                return  # the usual case: nothing changed, nothing written
        except OSError:
            pass
        temp = self.state_file.with_name(self.state_file.name + ".tmp")
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, self.state_file)
