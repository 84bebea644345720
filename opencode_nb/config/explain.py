"""The effective configuration, value by value, each with where it came from.

A person who asks "what configuration is in force?" wants more than what their files say: the defaults
that apply because nothing was written, and for each written value the file and line that won (several
files may set the same key) and the environment variable an `{env:...}` reference read. Sections keyed by
name (`provider`, `agent`, `command`) list only what was written in them: their unwritten fields have no
value of their own, the built-in agent or provider decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .layer import KeyPath, place
from .load import DEFAULTS_SOURCE, LoadedConfig

NAMED_SECTIONS = frozenset({"provider", "agent", "command"})
"""Mappings of name → section: only their written keys are shown."""
DEFAULT = "default"


@dataclass(frozen=True)
class Setting:
    """One value of the effective configuration."""

    path: KeyPath
    value: Any
    """A scalar or a list of scalars; mappings are walked into, so they never appear here."""
    source: str
    """`default`, or `file:line` of the source that set it last, with `, from $NAME` for a variable read;
    `managed: file:line` for a value of the managed file."""


def explain(loaded: LoadedConfig, *, fallbacks: dict[str, tuple[Any, str]] | None = None) -> list[Setting]:
    """Every effective value of `loaded.config`, in schema order.

    Args:
        fallbacks: what applies when a top-level key is unset and its default is None, as (value, why):
            the model the loop falls back to, say. The source then reads `default (why)`.
    """
    fallbacks = fallbacks or {}
    settings: list[Setting] = []
    dump = loaded.config.model_dump(mode="json", by_alias=True, exclude={"agent": {"__all__": {"max_steps"}}})
    for key, value in dump.items():
        path = (key,)
        if value is None and key in fallbacks and path not in loaded.origins:
            shown, why = fallbacks[key]
            settings.append(Setting(path, shown, f"{DEFAULT} ({why})"))
        elif key in NAMED_SECTIONS:
            for name, section in (value or {}).items():
                _walk(loaded, (key, name), section, settings, written_only=True)
        else:
            _walk(loaded, path, value, settings, written_only=False)
    return settings


def _walk(loaded: LoadedConfig, path: KeyPath, value: Any, out: list[Setting], *, written_only: bool) -> None:
    if isinstance(value, dict) and (value or not _written(loaded, path)):
        for key, child in value.items():
            _walk(loaded, (*path, str(key)), child, out, written_only=written_only)
        return
    if written_only and not _written(loaded, path):
        return
    out.append(Setting(path, value, source_of(loaded, path)))


def _written(loaded: LoadedConfig, path: KeyPath) -> bool:
    source, _ = loaded.origins.get(path, (None, None))
    return source is not None and source != DEFAULTS_SOURCE


def source_of(loaded: LoadedConfig, path: KeyPath) -> str:
    """Where the value at `path` came from: `default`, or the place that wrote it (and the variable it read)."""
    if not _written(loaded, path):
        return DEFAULT
    source, line = loaded.origins[path]
    where = place(source, line)
    if loaded.managed is not None and source == str(loaded.managed.path):
        where = f"managed: {where}"  # set by the administrator: no other source can change it
    names = loaded.env_refs.get(path)
    return f"{where}, from {', '.join('$' + n for n in names)}" if names else where
