"""Reading one config file into a mapping, remembering the line of every key.

The line map lets an error about a value name the file and line it was written on, after several files
have been merged. YAML is composed once for its node marks and constructed once for its values; JSON is
scanned for key positions. A file that does not parse is a `ConfigError` with its line and column,
never a parser traceback.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError

KeyPath = tuple[str, ...]


@dataclass
class Layer:
    """One source of configuration: its data, where it came from and the line of each key path."""

    data: dict[str, Any]
    source: str
    lines: dict[KeyPath, int] = field(default_factory=dict)
    base_dir: Path | None = None
    """Directory that relative `{file:...}` and `instructions` entries in this layer are resolved against."""


def read_config_file(path: Path) -> Layer:
    text = _read(path)
    if path.suffix == ".json":
        data, lines = _parse_json(text, path)
    else:
        data, lines = _parse_yaml(text, path)
    return Layer(data=data, source=str(path), lines=lines, base_dir=path.parent)


def read_markdown(path: Path, kind: str, name: str, body_key: str) -> Layer:
    """A markdown definition: YAML frontmatter holds the fields, the body becomes `body_key`.

    The result is shaped as a config layer, `{kind: {name: {...}}}`, so it merges like any file.
    """
    text = _read(path)
    fields: dict[str, Any] = {}
    lines: dict[KeyPath, int] = {}
    body = text
    match = re.match(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(\r?\n|\Z)", text, re.S | re.M)
    if match:
        front = match.group(1)
        body = text[match.end():]
        fields, front_lines = _parse_frontmatter(front, path)
        lines = {(kind, name, *k): line + 1 for k, line in front_lines.items()}  # +1: the opening ---
    entry = {**fields, body_key: body.strip()}
    lines.setdefault((kind, name), 1)
    return Layer(data={kind: {name: entry}}, source=str(path), lines=lines, base_dir=path.parent)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, hint=f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(path, hint=f"cannot be read: {exc.strerror}") from None


def _parse_frontmatter(text: str, path: Path) -> tuple[dict[str, Any], dict[KeyPath, int]]:
    try:
        return _parse_yaml(text, path)
    except ConfigError:
        # People write `description: Reviews code: style and bugs`. Quote such values and try once more.
        quoted = re.sub(r"^(\s*[\w-]+:\s+)([^'\"\n|>][^\n]*:\s[^\n]*)$",
                        lambda m: m.group(1) + json.dumps(m.group(2)), text, flags=re.M)
        if quoted == text:
            raise
        return _parse_yaml(quoted, path)


def _parse_yaml(text: str, path: Path) -> tuple[dict[str, Any], dict[KeyPath, int]]:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        where = f" (column {mark.column + 1})" if mark is not None else ""
        raise ConfigError(path, line=mark.line + 1 if mark is not None else None,
                          hint=f"invalid YAML: {problem}{where}") from None
    if data is None:
        return {}, {}
    if not isinstance(data, dict):
        raise ConfigError(path, line=1, hint=f"must be a mapping of keys to values, not a {type(data).__name__}")
    lines: dict[KeyPath, int] = {}
    _yaml_lines(node, (), lines)
    return data, lines


def _yaml_lines(node: Any, path: KeyPath, lines: dict[KeyPath, int]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = (*path, str(key_node.value))
            lines[key] = key_node.start_mark.line + 1
            _yaml_lines(value_node, key, lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            key = (*path, str(i))
            lines[key] = item.start_mark.line + 1
            _yaml_lines(item, key, lines)


def _parse_json(text: str, path: Path) -> tuple[dict[str, Any], dict[KeyPath, int]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(path, line=exc.lineno, hint=f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ConfigError(path, line=1, hint=f"must be a JSON object, not a {type(data).__name__}")
    lines: dict[KeyPath, int] = {}
    _json_lines(text, data, (), 0, lines)
    return data, lines


def _json_lines(text: str, node: Any, path: KeyPath, start: int, lines: dict[KeyPath, int]) -> None:
    """Best effort: each key is found as the first `"key":` after its parent's position."""
    if not isinstance(node, dict):
        return
    position = start
    for key, value in node.items():
        found = re.compile(re.escape(json.dumps(key)) + r"\s*:").search(text, position)
        if found is None:
            continue
        lines[(*path, key)] = text.count("\n", 0, found.start()) + 1
        _json_lines(text, value, (*path, key), found.end(), lines)
        position = found.end()
