"""JSON text to plain data plus the line of every key path.

`json` parses and reports syntax errors; a second, position-only walk over the (by then known valid)
text records the line each key starts on. The walk reuses the `json` module's own string and scalar
scanners, so its idea of where a token ends is exactly the parser's.

The limits of YAML files hold here too (yaml_lines.py): size, and nesting, which is measured by a flat scan
before anything recursive (`json` itself, the walk) sees the text, so a file nested ten thousand deep is a
`ConfigError` at the line where it crosses the limit, not a `RecursionError`.
"""

from __future__ import annotations

import bisect
import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .layer import KeyPath
from .yaml_lines import MAX_CONFIG_DEPTH, check_size

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_NESTING_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
"""A string (skipped whole, brackets inside it included) or a bracket."""


def parse_json(text: str, path: Path) -> tuple[dict[str, Any], dict[KeyPath, int], list[str]]:
    """Data, the line of each key path and notes (duplicate keys) for one JSON document.

    Raises:
        ConfigError: the text is not JSON, or its top level is not an object.
    """
    if not text.strip():
        return {}, {}, []
    check_size(len(text), path)
    deep = _too_deep(text)
    if deep is not None:
        raise ConfigError(path, line=text.count("\n", 0, deep) + 1,
                          hint=f"refused: it nests more than {MAX_CONFIG_DEPTH} levels deep")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = f"invalid JSON: {exc.msg} (column {exc.colno})"
        if text[exc.pos:exc.pos + 1] in {"/", "#"}:
            hint += "; JSON has no comments: remove them, or write opencode.yaml instead"
        elif re.match(r",\s*[}\]]", text[_last_comma(text, exc.pos):]):
            hint += "; JSON allows no trailing comma after the last entry"
        raise ConfigError(path, line=exc.lineno, hint=hint) from None
    if not isinstance(data, dict):
        raise ConfigError(path, line=1, hint=f"must be a JSON object ({{\"model\": ...}}), not a {type(data).__name__}")
    walker = _Walker(text, path)
    walker.value(0, ())
    return data, walker.lines, walker.notes


def _too_deep(text: str) -> int | None:
    """Where the text opens its (MAX_CONFIG_DEPTH + 1)-th enclosing bracket, if it does."""
    depth = 0
    for token in _NESTING_TOKENS.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            if depth > MAX_CONFIG_DEPTH:
                return token.start()
        elif char in "]}":
            depth -= 1
    return None


def _last_comma(text: str, pos: int) -> int:
    index = text.rfind(",", 0, pos + 1)
    return index if index >= 0 else pos


class _Walker:
    def __init__(self, text: str, path: Path) -> None:
        self.text = text
        self.path = path
        self.newlines = [i for i, c in enumerate(text) if c == "\n"]
        self.lines: dict[KeyPath, int] = {}
        self.notes: list[str] = []

    def line(self, pos: int) -> int:
        return bisect.bisect_left(self.newlines, pos) + 1

    def skip(self, pos: int) -> int:
        return _SPACE.match(self.text, pos).end()  # type: ignore[union-attr]

    def value(self, pos: int, path: KeyPath) -> int:
        """Walk the value starting at `pos`; return the position just after it."""
        pos = self.skip(pos)
        opener = self.text[pos]
        if opener == "{":
            return self.members(pos + 1, path)
        if opener == "[":
            return self.items(pos + 1, path)
        _, end = _DECODER.raw_decode(self.text, pos)
        return end

    def members(self, pos: int, path: KeyPath) -> int:
        pos = self.skip(pos)
        if self.text[pos] == "}":
            return pos + 1
        while True:
            line = self.line(pos)
            key, pos = scanstring(self.text, pos + 1)
            here = (*path, key)
            if here in self.lines:
                self.notes.append(f"{self.path}:{line}: duplicate key {key!r}; the later value wins")
            self.lines[here] = line
            pos = self.value(self.skip(pos) + 1, here)  # past the ':'
            pos = self.skip(pos)
            if self.text[pos] == "}":
                return pos + 1
            pos = self.skip(pos + 1)  # past the ','

    def items(self, pos: int, path: KeyPath) -> int:
        pos = self.skip(pos)
        if self.text[pos] == "]":
            return pos + 1
        index = 0
        while True:
            here = (*path, str(index))
            self.lines[here] = self.line(pos)
            pos = self.skip(self.value(pos, here))
            if self.text[pos] == "]":
                return pos + 1
            pos = self.skip(pos + 1)
            index += 1
