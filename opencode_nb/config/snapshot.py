"""The configuration files' content at one moment, kept so that configuration can be read again later.

A stamp (load.py) says whether files changed; a snapshot says what they held. The guard (guard.py) keeps
the snapshot of the configuration the person last stood behind, and reads it instead of the disk when the
disk holds a change that waits for them. Only the files `discover` finds (and `$OPENCODE_NB_CONFIG`'s) are
kept: a file added later is not in an older snapshot, and a file removed later still is.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .paths import discover
from .yaml_lines import MAX_CONFIG_BYTES


class FileCopy(BaseModel):
    """One configuration file as it was read."""

    model_config = ConfigDict(frozen=True)
    path: str
    kind: Literal["config", "agent", "command"]
    name: str = ""
    text: str | None
    """Its text; None when it could not be read as UTF-8 or was past the size limit (reading it from the
    snapshot then fails as reading it from disk did)."""
    sha256: str
    """Of the bytes on disk, so a file that is not text still changes the digest when it changes."""


class Snapshot(BaseModel):
    """Every configuration file of a directory, in the order they are merged."""

    model_config = ConfigDict(frozen=True)
    files: tuple[FileCopy, ...] = ()

    @property
    def digest(self) -> str:
        """Equal for two snapshots exactly when they hold the same files with the same bytes."""
        h = hashlib.sha256()
        for copy in self.files:
            h.update(f"{copy.kind}\0{copy.name}\0{copy.path}\0{copy.sha256}\n".encode())
        return h.hexdigest()


def take_snapshot(directory: Path, root: Path, global_dir: Path, extra: Path | None) -> Snapshot:
    """What the configuration files of `directory` hold now (one read of each, at most MAX_CONFIG_BYTES)."""
    found = [(f.path, f.kind, f.name) for f in discover(directory, root, global_dir)]
    if extra is not None and extra.is_file():
        found.append((extra, "config", ""))
    copies: list[FileCopy] = []
    for path, kind, name in found:
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_CONFIG_BYTES + 1)
        except OSError:
            continue  # vanished between listing and reading: it is not part of the configuration
        text: str | None
        try:
            text = data.decode("utf-8-sig") if len(data) <= MAX_CONFIG_BYTES else None
        except UnicodeDecodeError:
            text = None
        copies.append(FileCopy(path=str(path), kind=kind, name=name, text=text,
                               sha256=hashlib.sha256(data).hexdigest()))
    return Snapshot(files=tuple(copies))
