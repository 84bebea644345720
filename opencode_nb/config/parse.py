"""Reading one file into a layer: a config file by its suffix, a markdown definition by its frontmatter.

A file that cannot be read or does not parse is a `ConfigError` naming it (and the line, where there
is one), never a traceback from inside a parser.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from .json_lines import parse_json
from .layer import Layer
from .markdown import read_markdown
from .yaml_lines import parse_yaml


def read_config_file(path: Path, text: str | None = None) -> Layer:
    """`.json` files are JSON; anything else is YAML (which also reads most JSON).

    Args:
        text: the file's content as kept earlier (snapshot.py); read from disk when None.
    """
    text = read_text(path) if text is None else text
    parse = parse_json if path.suffix == ".json" else parse_yaml
    data, lines, notes = parse(text, path)
    return Layer(data=data, source=str(path), lines=lines, base_dir=path.parent, path=path, notes=notes)


def read_definition(path: Path, kind: str, name: str, text: str | None = None) -> Layer:
    """A markdown agent (`kind="agent"`) or command (`kind="command"`) named `name`."""
    return read_markdown(path, read_text(path) if text is None else text, kind, name)


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, hint=f"is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(path, hint=f"cannot be read: {exc.strerror}") from None
