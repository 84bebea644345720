"""Substituting `{env:...}`/`{file:...}` in a layer, and merging layers into one mapping.

Mappings merge deeply, key by key; lists and scalars are replaced. Permission mappings (`permission`
and `agent.<name>.permission`, at every depth) keep the order in which keys were last set: a key set
again by a later source is moved to the end, so under last-match-wins it beats the earlier entries,
as its author meant. A bare action merged with a mapping stands for `{"*": action}` and keeps its place,
so `permission: {bash: ask}` globally plus `{bash: {"git *": allow}}` in a project asks for everything
but git.

Every merged key path remembers the source and line it was last written at (`Origins`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .. import secrets
from ..errors import ConfigError
from . import inside
from .layer import KeyPath, Layer, Origins, dotted
from .paths import expand_home

_SUBSTITUTION = re.compile(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}|\{file:([^}\n]+)\}")


def substitute(layer: Layer, env: Mapping[str, str], notes: list[str],
               problems: list[ConfigError] | None = None, *, root: Path | None = None) -> None:
    """Fill `{env:NAME}` and `{file:path}` in every string value of the layer, in place.

    Replaced text is not scanned again, so a variable holding `{file:...}` stays literal. An unset
    variable becomes empty (with a note); a file that cannot be read is an error: raised at once, or,
    given `problems`, added there (and substituted as empty) so every problem is reported together.
    The variables each key path read are kept in `layer.env_refs`, the files in `layer.file_refs`: to say
    where a value came from, and for the guard to see a value start reading something new (loosen.py). A file
    that conventionally holds secrets (`secrets.is_secret_file`) has its values learnt as it is read, so they
    are redacted wherever the value they were put into goes, the system prompt included. A file written
    inside the project `root` is not read through a link that leads out of it (inside.py).
    """
    layer.data = _substitute(layer, layer.data, (), env, notes, problems, root)


def _substitute(layer: Layer, node: Any, path: KeyPath, env: Mapping[str, str], notes: list[str],
                problems: list[ConfigError] | None, root: Path | None) -> Any:
    if isinstance(node, dict):
        return {k: _substitute(layer, v, (*path, k), env, notes, problems, root) for k, v in node.items()}
    if isinstance(node, list):
        return [_substitute(layer, v, (*path, str(i)), env, notes, problems, root) for i, v in enumerate(node)]
    if not isinstance(node, str) or "{" not in node or path in layer.verbatim:
        return node

    def replace(match: re.Match[str]) -> str:
        name, file = match.groups()
        if name is not None:
            layer.env_refs.setdefault(path, []).append(name)
            if name not in env:
                notes.append(f"{layer.at(path)} {dotted(path)}: environment variable {name} is not set "
                             "(substituted as empty)")
            return env.get(name, "")
        try:
            return _file_text(layer, path, file, env, root)
        except ConfigError as exc:
            if problems is None:
                raise
            problems.append(exc)
            return ""

    return _SUBSTITUTION.sub(replace, node)


def _file_text(layer: Layer, path: KeyPath, written: str, env: Mapping[str, str], root: Path | None) -> str:
    target = Path(expand_home(written.strip(), env))
    if not target.is_absolute():
        target = (layer.base_dir or Path.cwd()) / target
    real = os.path.realpath(target)
    layer.file_refs.setdefault(path, []).append(real)  # a link is judged by where it leads
    try:
        text = inside.read_text(target, root).strip()
        if secrets.is_secret_file(real) or secrets.is_secret_file(str(target)):
            secrets.learn_file(real, text)
        return text
    except (OSError, UnicodeDecodeError) as exc:
        reason = (exc.strerror or str(exc)) if isinstance(exc, OSError) else "not UTF-8 text"
        if isinstance(exc, inside.LeadsOut):
            reason += "; write the path it leads to, if that file is meant"
        raise ConfigError(layer.source, line=layer.lines.get(path), key=dotted(path),
                          hint=f"{{file:{written}}} cannot be read ({reason}): {target}") from None


def merge(into: dict[str, Any], layer: Layer, origins: Origins) -> None:
    """Merge the layer's data into `into`, recording the origin of every key it writes."""
    _merge(into, layer.data, (), layer, origins)


def is_permission(path: KeyPath) -> bool:
    """`permission...` or `agent.<name>.permission...`: mappings where key order is meaning."""
    return path[:1] == ("permission",) or (len(path) >= 3 and path[0] == "agent" and path[2] == "permission")


def _merge(into: dict[str, Any], new: dict[str, Any], path: KeyPath, layer: Layer, origins: Origins) -> None:
    ordered = bool(path) and is_permission(path)
    for key, value in new.items():
        here = (*path, key)
        old = into.get(key)
        if is_permission(here) and isinstance(old, str) and isinstance(value, dict):
            old = {"*": old}
            origins[(*here, "*")] = origins.get(here, (layer.source, None))
            into[key] = old
        if isinstance(old, dict) and isinstance(value, dict):
            if ordered:
                into[key] = into.pop(key)
            _merge(old, value, here, layer, origins)
            origins[here] = (layer.source, layer.lines.get(here))
            continue
        if isinstance(old, list) and isinstance(value, list) and _gathered(here):
            for i, child in enumerate(value):
                _record_at(child, (*here, str(i)), (*here, str(len(old) + i)), layer, origins)
            into[key] = [*old, *_copy(value)]
            continue
        if ordered:
            into.pop(key, None)
        into[key] = _copy(value)
        for stale in [k for k in origins if len(k) > len(here) and k[: len(here)] == here]:
            del origins[stale]
        _record(value, here, layer, origins)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _gathered(path: KeyPath) -> bool:
    """Lists every layer adds to instead of replacing: a project's hooks and plugins join the person's (as
    Claude Code runs the hooks of every settings file), so a project cannot drop the person's guard hook."""
    return (len(path) == 2 and path[0] == "hooks") or path == ("plugin",)


def _record_at(value: Any, own: KeyPath, at: KeyPath, layer: Layer, origins: Origins) -> None:
    """Record `value`, found at `own` in its layer, as being at `at` in the merged configuration."""
    origins[at] = (layer.source, layer.lines.get(own))
    if isinstance(value, dict):
        for key, child in value.items():
            _record_at(child, (*own, key), (*at, key), layer, origins)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            _record_at(child, (*own, str(i)), (*at, str(i)), layer, origins)


def _record(value: Any, path: KeyPath, layer: Layer, origins: Origins) -> None:
    origins[path] = (layer.source, layer.lines.get(path))
    if isinstance(value, dict):
        for key, child in value.items():
            _record(child, (*path, key), layer, origins)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            _record(child, (*path, str(i)), layer, origins)


def plain(value: Any) -> Any:
    """A mapping given in Python, as plain data: models dumped (set fields only, as a file would spell
    them), keys as strings."""
    if isinstance(value, BaseModel):
        return plain(value.model_dump(exclude_unset=True, by_alias=True))
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value
