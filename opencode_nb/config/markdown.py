"""Agents and commands written as markdown files.

`.opencode/agent/reviewer.md` is the agent `reviewer`: YAML frontmatter between `---` lines holds the
same fields as `agent.reviewer` in a config file, and the body is its prompt (for a command, its
template). The result is shaped as a config layer, `{agent: {reviewer: {...}}}`, so a markdown file
merges exactly like a config file, field by field.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .layer import KeyPath, Layer
from .yaml_lines import check_size, parse_yaml

BODY_KEYS = {"agent": "prompt", "command": "template", "skill": "instructions"}
"""Which field the markdown body fills, per kind of definition (a skill's `SKILL.md`: config/skills.py)."""

_FENCE = "---"
_SIMPLE_ENTRY = re.compile(r"^(\s*[\w-]+:[ \t]+)(.*?)[ \t]*$")
_NOT_PLAIN = tuple("'\"|>[{&*!#")


def read_markdown(path: Path, text: str, kind: str, name: str) -> Layer:
    """The layer one markdown definition contributes.

    Raises:
        ConfigError: the frontmatter is never closed, or is not YAML even after quoting values that
            hold an unquoted `: ` (names the file and line); the file or its frontmatter is past a limit
            of yaml_lines.py (size, nesting, aliases).
    """
    check_size(len(text), path, "an agent or command file")
    body_key = BODY_KEYS[kind]
    fields: dict[str, Any] = {}
    field_lines: dict[KeyPath, int] = {}
    notes: list[str] = []
    rows = text.splitlines(keepends=True)
    body_start = 0
    if rows and rows[0].rstrip() == _FENCE:
        close = next((i for i in range(1, len(rows)) if rows[i].rstrip() == _FENCE), None)
        if close is None:
            raise ConfigError(path, line=1, hint="the frontmatter opened by `---` is never closed; "
                                                 "add a `---` line after the last field")
        fields, field_lines, notes = _parse_frontmatter("".join(rows[1:close]), path)
        body_start = close + 1
    body = "".join(rows[body_start:]).strip()
    prefix = (kind, name)
    lines = {(*prefix, *key): line for key, line in field_lines.items()}
    lines[(kind,)] = lines[prefix] = 1
    entry = dict(fields)
    if body:
        if body_key in fields:
            notes.append(f"{path}:{lines[(*prefix, body_key)]}: both `{body_key}:` and a body are given; "
                         "the body is used")
        entry[body_key] = body
        lines[(*prefix, body_key)] = body_start + 1 + _blank_rows(rows[body_start:])
    return Layer(data={kind: {name: entry}}, source=str(path), lines=lines, base_dir=path.parent, path=path,
                 verbatim=frozenset({(*prefix, body_key)}) if body else frozenset(), notes=notes)


def _parse_frontmatter(text: str, path: Path) -> tuple[dict[str, Any], dict[KeyPath, int], list[str]]:
    try:
        return parse_yaml(text, path, first_line=2)
    except ConfigError as first:
        if first.hint.startswith("refused:"):
            raise  # past a limit: quoting will not help, and parsing it twice costs twice
        # People write `description: Reviews code: style and bugs`. Quote such values and try once more;
        # if that fails too, the first error (about the text as written) is the one to show.
        quoted = "".join(_quote_colon_value(row) for row in text.splitlines(keepends=True))
        if quoted == text:
            raise
        try:
            return parse_yaml(quoted, path, first_line=2)
        except ConfigError:
            raise first from None


def _quote_colon_value(row: str) -> str:
    ending = row[len(row.rstrip("\r\n")):]
    match = _SIMPLE_ENTRY.match(row.rstrip("\r\n"))
    if not match:
        return row
    key, value = match.groups()
    if not value or value.startswith(_NOT_PLAIN) or not (": " in value or value.endswith(":")):
        return row
    return key + json.dumps(value, ensure_ascii=False) + ending


def _blank_rows(rows: list[str]) -> int:
    count = 0
    for row in rows:
        if row.strip():
            break
        count += 1
    return count
