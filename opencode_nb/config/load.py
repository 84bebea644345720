"""Finding, merging and validating the configuration of one working directory.

Sources, lowest precedence first (a later source wins, key by key):

1. built-in defaults;
2. the global config dir, `$XDG_CONFIG_HOME/opencode_nb` (default `~/.config/opencode_nb`): its
   `opencode.{yaml,yml,json}`, then markdown agents (`agent/`, `agents/`) and commands (`command/`,
   `commands/`);
3. each directory from the project root (the nearest ancestor holding `.git`, else the working
   directory itself) down to the working directory: `opencode.{yaml,yml,json}`, then the same files
   and markdown folders under its `.opencode/`;
4. the file named by `$OPENCODE_NB_CONFIG` (relative to the process's working directory);
5. the mapping passed in (`<workspace config>`).

Mappings merge deeply and everything else is replaced; in permission mappings a key set again moves to
the end (see `merge`). Each source is cleaned of unknown keys (a `ConfigWarning` with a hint) and has
its `{env:...}`/`{file:...}` substituted before it is merged; the result is validated once, and an
invalid value is reported at the file and line it came from.

A file larger than `MAX_CONFIG_BYTES` is refused before it is read; the parsers refuse absurd nesting and
alias bombs (yaml_lines.py), so a hostile or broken file is a `ConfigError`, never a `MemoryError`.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ConfigWarning
from .layer import KeyPath, Layer, Origins, place
from .managed import Managed, check_config, filter_mcp, loosening_notices, read_managed
from .merge import merge, plain, substitute
from .parse import read_config_file, read_definition
from .paths import discover, expand_home, global_config_dir, project_root, resolve_instructions
from .restricting import restricting_problems
from .schema import AgentConfig, CommandConfig, Config
from .snapshot import Snapshot
from .validate import action_problems, drop_unknown, validation_problems
from .yaml_lines import check_size

CONFIG_ENV = "OPENCODE_NB_CONFIG"
"""Names one more config file, read after the project's files."""
OVERRIDES_SOURCE = "<workspace config>"
DEFAULTS_SOURCE = "<defaults>"
DEFAULTS: dict[str, Any] = {}
"""Built-in configuration; agents and providers carry their own defaults where they are defined."""
Stamp = tuple[tuple[str, int, int], ...]
"""(path, modification time in ns, size) of each configuration file; -1s for one that vanished."""
_PACKAGE_DIR = str(Path(__file__).resolve().parent.parent) + os.sep


@dataclass(frozen=True)
class LoadedConfig:
    """The validated configuration of a directory, and what it was made from."""

    config: Config
    root: Path
    """The project root: the nearest ancestor holding `.git`, else the directory itself."""
    directory: Path
    global_dir: Path
    agents: dict[str, AgentConfig] = field(default_factory=dict)
    """From config files and markdown definitions, merged (the same objects as `config.agent`)."""
    commands: dict[str, CommandConfig] = field(default_factory=dict)
    sources: list[Path] = field(default_factory=list)
    """Every file read, in merge order."""
    warnings: list[str] = field(default_factory=list)
    instruction_files: list[Path] = field(default_factory=list)
    """`instructions` entries resolved to existing files (relative entries against the file naming them)."""
    origins: Origins = field(default_factory=dict)
    """Where each key path was last written: (source, line)."""
    env_refs: dict[KeyPath, list[str]] = field(default_factory=dict)
    """The environment variables a key path's value was read from through `{env:...}`."""
    file_refs: dict[KeyPath, list[str]] = field(default_factory=dict)
    """The files a key path's value was read from through `{file:...}`, as absolute paths with links resolved."""
    extra: Path | None = None
    """The file `$OPENCODE_NB_CONFIG` named, if any."""
    refused: dict[str, str] = field(default_factory=dict)
    """Agents refused because a key that looked like a restriction was none (restricting.py), each with the
    problem; they are disabled in `config`."""
    managed: Managed | None = None
    """The administrator's policy (managed.py), merged last and enforced above everything; None without one."""
    managed_notes: list[str] = field(default_factory=list)
    """What the managed file overrides or refuses in the other sources, as said once at load (also in warnings)."""
    stamp: Stamp = ()
    """The files as they were when read (`stamp_files`): `changed()` compares them with the disk."""

    def changed(self) -> bool:
        """Whether a configuration file was edited, added or removed since this configuration was read.

        A handful of `stat` calls: cheap enough to ask before every prompt.
        """
        return self.on_disk() != self.stamp

    def on_disk(self) -> Stamp:
        """The configuration files as they are now (`stamp_files`)."""
        return stamp_files(self.directory, self.root, self.global_dir, self.extra)

    def where(self, *path: str) -> tuple[str | None, int | None]:
        """Source and line of a key path, or of its nearest written ancestor."""
        key: KeyPath = tuple(path)
        while key:
            if key in self.origins:
                return self.origins[key]
            key = key[:-1]
        return None, None


def load_config(
    directory: str | Path = ".",
    overrides: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    files: Snapshot | None = None,
) -> LoadedConfig:
    """Read, merge and validate every configuration source for `directory`.

    Args:
        directory: the working directory; project files are read from its root down to it.
        overrides: merged last, over every file (`<workspace config>` in messages).
        env: the environment to read (`XDG_CONFIG_HOME`, `HOME`, `OPENCODE_NB_CONFIG`, `{env:...}`);
            defaults to `os.environ`.
        files: the configuration files as they were at some earlier moment, read instead of the disk's
            (the guard's confirmed configuration); the stamp is still the disk's, so `changed()` says
            whether the disk moved on since.

    Raises:
        ConfigError: a file does not parse, or a value is invalid (names file, line, key and the fix).
    """
    env = dict(os.environ if env is None else env)
    managed = read_managed()  # a broken managed file stops everything: failing open would drop the policy
    directory = Path(directory).expanduser().resolve()
    if not directory.is_dir():
        raise ConfigError(directory, hint="is not a directory; give the project or notebook directory")
    root = project_root(directory)
    global_dir = global_config_dir(env)
    extra = _extra_file(env)
    stamp = stamp_files(directory, root, global_dir, extra)  # before reading: an edit meanwhile shows as a change
    problems: list[ConfigError] = []
    layers = [Layer(data=plain(DEFAULTS), source=DEFAULTS_SOURCE),
              *(_file_layers(directory, root, global_dir, extra, problems) if files is None else
                _snapshot_layers(files, problems))]
    if overrides:
        layers.append(Layer(data=plain(overrides), source=OVERRIDES_SOURCE, base_dir=directory))

    notes: list[str] = []
    merged: dict[str, Any] = {}
    origins: Origins = {}
    refused: dict[str, ConfigError] = {}
    unknown: list[ConfigError] = []
    for layer in layers:
        notes += layer.notes
        agents_refused, everyone = restricting_problems(layer)  # before unknown keys are dropped: fail closed
        problems += everyone
        for name, problem in agents_refused.items():
            refused.setdefault(name, problem)
        notes += drop_unknown(layer, unknown)
        substitute(layer, env, notes, problems, root=root)
        merge(merged, layer, origins)
    managed_notes: list[str] = []
    if managed is not None:
        managed_notes = loosening_notices(managed, merged, origins)
        notes += managed_notes
        merge(merged, managed.config_layer(), origins)
    for name in refused:  # whatever any file says of it, a refused agent does not run
        merged.setdefault("agent", {})[name] = {"disable": True}
    notes += [str(problem) for problem in refused.values()]
    _warn(notes)
    # A variable counts where the layer that read it still has the last word on that key.
    env_refs = {path: names for layer in layers for path, names in layer.env_refs.items()
                if origins.get(path, (None, None))[0] == layer.source}
    file_refs = {path: files for layer in layers for path, files in layer.file_refs.items()
                 if origins.get(path, (None, None))[0] == layer.source}
    bad_actions = action_problems(merged, origins)
    config, invalid = validation_problems(merged, origins, skip_permissions=bool(bad_actions))
    order = {layer.source: i for i, layer in enumerate(layers)}  # the order the files were read in
    problems += sorted(bad_actions + invalid, key=lambda p: (order.get(p.path or "", len(order)), p.line or 0))
    if problems or config is None:
        # Every mistake at once: the unknown keys too, which would otherwise surface only once the rest is fixed.
        everything = problems + [u for u in unknown if not any(p.path == u.path and p.line == u.line
                                                               for p in problems)]
        raise ConfigError.combine(sorted(everything, key=lambda p: (order.get(p.path or "", -1), p.line or 0)))
    if managed is not None:
        servers, off = filter_mcp(managed, config)
        config = config.model_copy(update={"mcp": servers})
        refusals = [str(p) for p in check_config(managed, config)]
        _warn(off + refusals)
        notes += off + refusals
        managed_notes += off + refusals
    base_dirs = {layer.source: layer.base_dir for layer in layers if layer.base_dir is not None}
    instruction_files, missing = _instruction_files(config, origins, base_dirs, root, env)
    _warn(missing)
    return LoadedConfig(
        config=config, root=root, directory=directory, global_dir=global_dir, agents=config.agent,
        commands=config.command, sources=[layer.path for layer in layers if layer.path is not None],
        warnings=notes + missing, instruction_files=instruction_files, origins=origins, env_refs=env_refs,
        file_refs=file_refs, extra=extra, stamp=stamp, managed=managed, managed_notes=managed_notes,
        refused={name: str(p) for name, p in refused.items()},
    )


def stamp_files(directory: Path, root: Path, global_dir: Path, extra: Path | None) -> Stamp:
    """What the configuration files of `directory` look like on disk now: every file that would be read, with
    its modification time and size. A file added, removed or edited changes the stamp."""
    paths = [found.path for found in discover(directory, root, global_dir)]
    if extra is not None:
        paths.append(extra)
    stamp: list[tuple[str, int, int]] = []
    for path in paths:
        try:
            info = path.stat()
            stamp.append((str(path), info.st_mtime_ns, info.st_size))
        except OSError:
            stamp.append((str(path), -1, -1))
    return tuple(stamp)


def _extra_file(env: Mapping[str, str]) -> Path | None:
    extra = env.get(CONFIG_ENV)
    return Path(expand_home(extra, env)).absolute() if extra else None


def _file_layers(directory: Path, root: Path, global_dir: Path, extra: Path | None,
                 problems: list[ConfigError]) -> list[Layer]:
    """A layer per file that reads; the others' errors go to `problems`, so they are all reported at once."""
    layers: list[Layer] = []
    for found in discover(directory, root, global_dir):
        try:
            layers.append(read_config_file(_small(found.path)) if found.kind == "config" else
                          read_definition(_small(found.path), found.kind, found.name))
        except ConfigError as exc:
            problems.append(exc)
    if extra is not None:
        if not extra.is_file():
            problems.append(ConfigError(extra, hint=f"is named by ${CONFIG_ENV} but is not a file; fix the path or "
                                                    "unset the variable"))
        else:
            try:
                layers.append(read_config_file(_small(extra)))
            except ConfigError as exc:
                problems.append(exc)
    return layers


def _snapshot_layers(files: Snapshot, problems: list[ConfigError]) -> list[Layer]:
    layers: list[Layer] = []
    for copy in files.files:
        path = Path(copy.path)
        try:
            if copy.text is None:
                raise ConfigError(path, hint="was not UTF-8 text of at most 1 MiB when it was kept")
            layers.append(read_config_file(path, copy.text) if copy.kind == "config" else
                          read_definition(path, copy.kind, copy.name, copy.text))
        except ConfigError as exc:
            problems.append(exc)
    return layers


def _small(path: Path) -> Path:
    """`path`, once its size is known to be within MAX_CONFIG_BYTES (a huge file is never read into memory)."""
    try:
        size = path.stat().st_size
    except OSError:
        return path  # reading it reports the problem
    check_size(size, path)
    return path


def _instruction_files(
    config: Config, origins: Origins, base_dirs: dict[str, Path], root: Path, env: Mapping[str, str]
) -> tuple[list[Path], list[str]]:
    source, _ = origins.get(("instructions",), (None, None))
    base = base_dirs.get(source or "", root)
    files: dict[Path, None] = {}
    missing: list[str] = []
    for index, (entry, matches) in enumerate(resolve_instructions(config.instructions, base, env)):
        if matches is None:
            continue
        if not matches:
            _, line = origins.get(("instructions", str(index)), (source, None))
            missing.append(f"{place(source, line)}: instructions entry {entry!r} matches no file in {base}")
        files.update(dict.fromkeys(matches))
    return list(files), missing


def _warn(notes: list[str]) -> None:
    """Warn at the caller's line: the first frame outside this package (a script's `Workspace(...)`), not ours."""
    level, frame = 2, sys._getframe(1)  # 2: the function that called us
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        level, frame = level + 1, frame.f_back  # type: ignore[assignment]
    for note in notes:
        warnings.warn(note, ConfigWarning, stacklevel=level)
