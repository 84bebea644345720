"""Finding, merging and validating configuration.

Sources, later winning key by key: built-in defaults; the global config dir
(`$XDG_CONFIG_HOME/opencode_nb`, default `~/.config/opencode_nb`); every directory from the project root
(the nearest ancestor holding `.git`, else the working directory) down to the working directory, each with
`opencode.{yaml,yml,json}`, `.opencode/opencode.{yaml,yml,json}` and markdown agents and commands under
`.opencode/`; the file named by `OPENCODE_NB_CONFIG`; the mapping given to the workspace.

Mappings merge deeply; anything else is replaced. In a `permission` mapping, a key set again by a later
source moves to the end, so that it wins under last-match-wins as its author meant.

Every key path remembers the file and line it was last written at, so a bad value is reported where
it was written, and an unknown key is a warning naming it (with the likely intended key), not an error.
"""

from __future__ import annotations

import difflib
import os
import re
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from ..permission.rules import from_config
from .parse import KeyPath, Layer, read_config_file, read_markdown
from .schema import AgentConfig, CommandConfig, Config

CONFIG_ENV = "OPENCODE_NB_CONFIG"
CONFIG_NAMES = ("opencode.yaml", "opencode.yml", "opencode.json")
AGENT_DIRS = ("agent", "agents")
COMMAND_DIRS = ("command", "commands")
OVERRIDES_SOURCE = "<workspace config>"

DEFAULTS: dict[str, Any] = {}
"""Built-in configuration; the agent registry and providers carry their own defaults."""


class ConfigWarning(UserWarning):
    """A configuration problem that does not stop loading (an unknown key, an unset variable)."""


@dataclass(frozen=True)
class LoadedConfig:
    config: Config
    root: Path
    global_dir: Path
    sources: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    origins: dict[KeyPath, tuple[str, int | None]] = field(default_factory=dict)
    """Where each key path was last written: (file, line)."""

    @property
    def agents(self) -> dict[str, AgentConfig]:
        return self.config.agent

    @property
    def commands(self) -> dict[str, CommandConfig]:
        return self.config.command

    def where(self, *path: str) -> tuple[str | None, int | None]:
        """File and line of a key path, or of its nearest written ancestor."""
        key = tuple(path)
        while key:
            if key in self.origins:
                return self.origins[key]
            key = key[:-1]
        return None, None


def global_config_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
    return Path(base).expanduser() / "opencode_nb"


def project_root(directory: Path) -> Path:
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return directory


def load_config(
    directory: str | Path = ".",
    overrides: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """Read, merge and validate every configuration source for `directory`.

    Raises:
        ConfigError: a file does not parse, or a value is invalid (names file, line, key and the fix).
    """
    env = dict(os.environ if env is None else env)
    directory = Path(directory).expanduser().resolve()
    root = project_root(directory)
    global_dir = global_config_dir(env)
    layers = [Layer(data=dict(DEFAULTS), source="<defaults>"), *_discover(directory, root, global_dir, env)]
    if overrides:
        layers.append(Layer(data=_plain(overrides), source=OVERRIDES_SOURCE, base_dir=directory))
    sources: list[str] = []
    notes: list[str] = []
    merged: dict[str, Any] = {}
    origins: dict[KeyPath, tuple[str, int | None]] = {}
    for layer in layers:
        sources.append(layer.source)
        _substitute(layer, layer.data, (), env, notes)
        _merge(merged, layer.data, (), layer, origins)
    notes += _drop_unknown(merged, Config, (), origins)
    for note in notes:
        warnings.warn(note, ConfigWarning, stacklevel=2)
    _check_permissions(merged, origins)
    config = _validate(merged, origins)
    return LoadedConfig(config=config, root=root, global_dir=global_dir, sources=sources, warnings=notes,
                        origins=origins)


# ---------------------------------------------------------------------------------------------- discovery


def _discover(directory: Path, root: Path, global_dir: Path, env: Mapping[str, str]) -> Iterator[Layer]:
    yield from _dir_layers(global_dir)
    levels = [directory, *(p for p in directory.parents if p == root or root in p.parents)]
    for level in reversed(levels):
        for name in CONFIG_NAMES:
            if (level / name).is_file():
                yield read_config_file(level / name)
        dot = level / ".opencode"
        if dot.is_dir():
            yield from _dir_layers(dot)
    extra = env.get(CONFIG_ENV)
    if extra:
        path = Path(extra).expanduser()
        if not path.is_file():
            raise ConfigError(path, hint=f"named by ${CONFIG_ENV} does not exist; fix or unset the variable")
        yield read_config_file(path)


def _dir_layers(config_dir: Path) -> Iterator[Layer]:
    """Config files and markdown definitions of one config directory (the global one or a `.opencode`)."""
    if not config_dir.is_dir():
        return
    for name in CONFIG_NAMES:
        if (config_dir / name).is_file():
            yield read_config_file(config_dir / name)
    for kind, dirs, body in (("agent", AGENT_DIRS, "prompt"), ("command", COMMAND_DIRS, "template")):
        for sub in dirs:
            folder = config_dir / sub
            if not folder.is_dir():
                continue
            for path in sorted(folder.rglob("*.md")):
                name = path.relative_to(folder).with_suffix("").as_posix()
                yield read_markdown(path, kind, name, body)


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_unset=True)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------- merge


_ENV = re.compile(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
_FILE = re.compile(r"\{file:([^}]+)\}")


def _substitute(layer: Layer, node: Any, path: KeyPath, env: Mapping[str, str], notes: list[str]) -> Any:
    """Replace `{env:NAME}` and `{file:path}` in every string value of the layer, in place."""
    if isinstance(node, dict):
        for key, value in node.items():
            node[key] = _substitute(layer, value, (*path, str(key)), env, notes)
        return node
    if isinstance(node, list):
        return [_substitute(layer, v, (*path, str(i)), env, notes) for i, v in enumerate(node)]
    if not isinstance(node, str) or "{" not in node:
        return node

    def env_value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            notes.append(f"{_at(layer, path)} {_dotted(path)}: environment variable {name} is not set "
                         "(substituted as empty)")
        return env.get(name, "")

    def file_value(match: re.Match[str]) -> str:
        target = Path(os.path.expanduser(match.group(1).strip()))
        if not target.is_absolute():
            target = (layer.base_dir or Path.cwd()) / target
        try:
            return target.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(layer.source, line=layer.lines.get(path), key=_dotted(path),
                              hint=f"{{file:{match.group(1)}}} cannot be read ({exc.strerror}): {target}") from None

    return _FILE.sub(file_value, _ENV.sub(env_value, node))


def _at(layer: Layer, path: KeyPath) -> str:
    line = layer.lines.get(path)
    return f"{layer.source}:{line}" if line else layer.source


def _merge(into: dict[str, Any], new: dict[str, Any], path: KeyPath, layer: Layer,
           origins: dict[KeyPath, tuple[str, int | None]]) -> None:
    ordered = "permission" in path
    for key, value in new.items():
        key = str(key)
        here = (*path, key)
        old = into.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            if ordered:
                into[key] = into.pop(key)
            _merge(old, value, here, layer, origins)
        else:
            if ordered and key in into:
                del into[key]
            into[key] = _copy(value)
            _forget(origins, here)
        _record(value, here, layer, origins)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _forget(origins: dict[KeyPath, tuple[str, int | None]], path: KeyPath) -> None:
    for key in [k for k in origins if k[: len(path)] == path and len(k) > len(path)]:
        del origins[key]


def _record(value: Any, path: KeyPath, layer: Layer, origins: dict[KeyPath, tuple[str, int | None]]) -> None:
    origins[path] = (layer.source, layer.lines.get(path))
    if isinstance(value, dict):
        for key, child in value.items():
            _record(child, (*path, str(key)), layer, origins)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            _record(child, (*path, str(i)), layer, origins)


# ---------------------------------------------------------------------------------------------- validation


def _drop_unknown(node: dict[str, Any], model: type[BaseModel], path: KeyPath,
                  origins: dict[KeyPath, tuple[str, int | None]]) -> list[str]:
    """Warn about and remove keys the schema does not know; descend into known sections."""
    notes: list[str] = []
    fields = model.model_fields
    for key in list(node):
        here = (*path, key)
        if key not in fields:
            source, line = origins.get(here, (None, None))
            guess = difflib.get_close_matches(key, list(fields), n=1, cutoff=0.6)
            hint = f" (did you mean {guess[0]}?)" if guess else f" (known keys: {', '.join(fields)})"
            notes.append(f"{_place(source, line)}: unknown key {_dotted(here)}{hint}; it is ignored")
            del node[key]
            continue
        section = _section_model(model, key)
        value = node[key]
        if section is None or not isinstance(value, dict):
            continue
        submodel, keyed = section
        if keyed:
            for name, entry in value.items():
                if isinstance(entry, dict):
                    notes += _drop_unknown(entry, submodel, (*here, name), origins)
        else:
            notes += _drop_unknown(value, submodel, here, origins)
    return notes


def _section_model(model: type[BaseModel], key: str) -> tuple[type[BaseModel], bool] | None:
    """The schema of a nested section: (model, True) for `dict[str, Model]`, (model, False) for `Model`."""
    annotation = model.model_fields[key].annotation
    candidates = [annotation, *get_args(annotation)]
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate, False
        if get_origin(candidate) is dict:
            value_type = get_args(candidate)[1]
            if isinstance(value_type, type) and issubclass(value_type, BaseModel):
                return value_type, True
    return None


def _check_permissions(merged: dict[str, Any], origins: dict[KeyPath, tuple[str, int | None]]) -> None:
    """Permission values get their own check: the message names the exact pattern and the allowed actions."""
    sections: list[KeyPath] = [("permission",)] if "permission" in merged else []
    for name, agent in (merged.get("agent") or {}).items():
        if isinstance(agent, dict) and "permission" in agent:
            sections.append(("agent", name, "permission"))
    for section in sections:
        value: Any = merged
        for key in section:
            value = value[key]
        try:
            from_config(value, key_prefix=_dotted(section))
        except ConfigError as exc:
            bad = _path_of(exc.key or "", section, value)
            source, line = origins.get(bad, origins.get(section, (None, None)))
            raise ConfigError(source, line=line, key=exc.key, hint=exc.hint) from None


def _path_of(dotted: str, section: KeyPath, value: Any) -> KeyPath:
    """Recover the key path tuple of a permission entry from its dotted rendering."""
    if not isinstance(value, dict):
        return section
    for permission, entry in value.items():
        if isinstance(entry, dict):
            for pattern in entry:
                if _dotted((*section, permission, pattern)) == dotted:
                    return (*section, permission, pattern)
        if _dotted((*section, permission)) == dotted:
            return (*section, permission)
    return section


def _validate(merged: dict[str, Any], origins: dict[KeyPath, tuple[str, int | None]]) -> Config:
    try:
        return Config.model_validate(merged)
    except ValidationError as exc:
        error = exc.errors()[0]
        path = _real_path(merged, error["loc"])
        source, line = origins.get(path, (None, None))
        if source is None:
            source, line = _nearest(origins, path)
        raise ConfigError(source, line=line, key=_dotted(path), hint=_describe(error)) from None


def _real_path(data: Any, loc: tuple[Any, ...]) -> KeyPath:
    """Pydantic puts union member names into `loc`; keep only the steps that exist in the data."""
    path: list[str] = []
    node = data
    for step in loc:
        if isinstance(node, dict) and str(step) in node:
            path.append(str(step))
            node = node[str(step)]
        elif isinstance(node, list) and isinstance(step, int) and step < len(node):
            path.append(str(step))
            node = node[step]
    return tuple(path)


def _nearest(origins: dict[KeyPath, tuple[str, int | None]], path: KeyPath) -> tuple[str | None, int | None]:
    while path:
        path = path[:-1]
        if path in origins:
            return origins[path]
    return None, None


def _describe(error: Any) -> str:
    kind, value, ctx = error["type"], error.get("input"), error.get("ctx") or {}
    if kind == "literal_error":
        allowed = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return f"{value!r} is not one of {', '.join(allowed)}"
    if kind == "string_pattern_mismatch":
        return f"{value!r} is not a model id: use provider/model, e.g. anthropic/claude-sonnet-4-5"
    if kind == "missing":
        return "is required"
    if kind in {"greater_than", "greater_than_equal", "less_than_equal", "less_than"}:
        return f"{value!r}: {error['msg'].lower()}"
    return f"{value!r}: {error['msg']}" if value is not None else error["msg"]


def _dotted(path: KeyPath) -> str:
    return ".".join(p if re.fullmatch(r"[\w-]+", p) else '"' + p.replace('"', '\\"') + '"' for p in path)


def _place(source: str | None, line: int | None) -> str:
    if source is None:
        return "config"
    return f"{source}:{line}" if line else source
