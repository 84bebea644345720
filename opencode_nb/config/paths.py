"""Where configuration lives: the global config dir, the project root, and the files between them.

Discovery order is precedence order (later wins): the global dir first, then each directory from the
project root down to the working directory, so the configuration nearest to the work has the last word.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

CONFIG_NAMES = ("opencode.yaml", "opencode.yml", "opencode.json")
"""Config file names, read in this order when a directory holds several."""
DEFINITION_DIRS: dict[Literal["agent", "command"], tuple[str, ...]] = {
    "agent": ("agent", "agents"),
    "command": ("command", "commands"),
}
"""Folders of a config directory holding markdown definitions, per kind."""
PROJECT_DIR = ".opencode"


@dataclass(frozen=True)
class Found:
    """A file to read: a config file (`kind="config"`) or a markdown definition named `name`."""

    path: Path
    kind: Literal["config", "agent", "command"]
    name: str = ""


def global_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/opencode_nb`, else `~/.config/opencode_nb` (a relative XDG value is ignored, as
    the XDG spec asks)."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_CONFIG_HOME", "")
    if xdg and os.path.isabs(os.path.expanduser(xdg)):
        return Path(xdg).expanduser() / "opencode_nb"
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".config" / "opencode_nb"


def project_root(directory: Path) -> Path:
    """The nearest ancestor holding `.git` (a directory, or a file in a worktree), else `directory`."""
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return directory


def levels(directory: Path, root: Path) -> list[Path]:
    """Every directory from `root` down to `directory`, both included."""
    if directory != root and root not in directory.parents:
        return [directory]
    chain = [directory, *(p for p in directory.parents if p == root or root in p.parents)]
    return chain[::-1]


def discover(directory: Path, root: Path, global_dir: Path) -> list[Found]:
    """Every config file and markdown definition for `directory`, lowest precedence first."""
    found = list(_config_dir(global_dir))
    for level in levels(directory, root):
        found.extend(Found(level / name, "config") for name in CONFIG_NAMES if (level / name).is_file())
        found.extend(_config_dir(level / PROJECT_DIR))
    return found


def _config_dir(folder: Path) -> Iterator[Found]:
    """A config directory (the global one or a `.opencode`): its config files, then agents, then commands."""
    if not folder.is_dir():
        return
    for name in CONFIG_NAMES:
        if (folder / name).is_file():
            yield Found(folder / name, "config")
    for kind, subdirs in DEFINITION_DIRS.items():
        for subdir in subdirs:
            base = folder / subdir
            if base.is_dir():
                for path in sorted(p for p in base.rglob("*.md") if p.is_file()):
                    yield Found(path, kind, path.relative_to(base).with_suffix("").as_posix())


def expand_home(text: str, env: Mapping[str, str]) -> str:
    """`~` and `~/...` become the home directory of `env` (its HOME), so a test's fake home is honoured."""
    if text == "~" or text.startswith("~/"):
        return (env.get("HOME") or os.path.expanduser("~")) + text[1:]
    return text


def resolve_instructions(
    entries: list[str], base_dir: Path, env: Mapping[str, str]
) -> list[tuple[str, list[Path] | None]]:
    """Each `instructions` entry with the files it names: a path or a glob (`**` included), relative to
    `base_dir`, `~` expanded. A URL names no file here (None): it is left to whoever fetches it."""
    resolved: list[tuple[str, list[Path] | None]] = []
    for entry in entries:
        if entry.startswith(("http://", "https://")):
            resolved.append((entry, None))
            continue
        pattern = Path(expand_home(entry, env))
        if not pattern.is_absolute():
            pattern = base_dir / pattern
        pattern = Path(os.path.normpath(pattern))
        if glob.has_magic(str(pattern)):
            matches = [Path(p) for p in sorted(glob.glob(str(pattern), recursive=True))]
        else:
            matches = [pattern]
        resolved.append((entry, [p for p in matches if p.is_file()]))
    return resolved
