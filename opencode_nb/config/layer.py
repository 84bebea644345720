"""One source of configuration, and how key paths are written in messages.

Every source — a YAML or JSON file, a markdown definition, the workspace mapping — becomes a `Layer`:
plain data plus the line each key path was written on. Layers merge in order; the lines travel with
the values, so a problem found after merging is still reported where its author wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KeyPath = tuple[str, ...]
"""`("agent", "build", "steps")`; list items are their index as a string."""

Origins = dict[KeyPath, tuple[str, "int | None"]]
"""Where each key path of the merged data was last written: (source, line)."""


@dataclass
class Layer:
    data: dict[str, Any]
    source: str
    """A file path, or a name in angle brackets for sources that are not files (`<workspace config>`)."""
    lines: dict[KeyPath, int] = field(default_factory=dict)
    base_dir: Path | None = None
    """Relative `{file:...}` and `instructions` entries in this layer are resolved against it."""
    path: Path | None = None
    """The file read, when the layer is one."""
    verbatim: frozenset[KeyPath] = frozenset()
    """Key paths whose text is taken as written, without `{env:...}`/`{file:...}` substitution."""
    notes: list[str] = field(default_factory=list)
    """Problems found while reading that do not stop loading (duplicate keys)."""
    env_refs: dict[KeyPath, list[str]] = field(default_factory=dict)
    """The environment variables each key path's `{env:...}` read (filled by `substitute`)."""
    file_refs: dict[KeyPath, list[str]] = field(default_factory=dict)
    """The files each key path's `{file:...}` read, as absolute paths (filled by `substitute`)."""

    def at(self, path: KeyPath) -> str:
        return place(self.source, self.lines.get(path))


_PLAIN_SEGMENT = re.compile(r"[\w-]+")


def dotted(path: KeyPath) -> str:
    """`agent.reviewer.permission.bash."rm *"`: segments that are not plain names are quoted."""
    return ".".join(s if _PLAIN_SEGMENT.fullmatch(s) else '"' + s.replace('"', '\\"') + '"' for s in path)


def place(source: str | None, line: int | None) -> str:
    if source is None:
        return "config"
    return f"{source}:{line}" if line else source
