"""Skills: folders of instructions an agent loads when a task calls for them.

A skill is a folder `<name>/` holding `SKILL.md` — YAML frontmatter with `name` and `description`, then the
instructions — and any files beside it (scripts, references, templates) the instructions mention. Only the
name and description reach the model up front (the `skill` tool's description); the body reaches it when the
tool is called, so a project can hold many skills at the cost of a line each.

Where skills are found, farthest first (a nearer skill of the same name shadows a farther one, and the
listing says so):

1. the global config dir (`~/.config/opencode_nb`): `skill/<name>/`, `skills/<name>/`;
2. each folder from the git root (the filesystem root outside a repository) down to the working directory:
   `.agents/skills/<name>/`, `.claude/skills/<name>/`, `.opencode/skill/<name>/`, `.opencode/skills/<name>/`
   (in one folder, `.opencode` has the last word, as its config files do). Outside a repository the folders
   above the working directory may be shared (`/tmp`): a skill there loads only if the person (or root) owns it.

The folders other tools use (`.claude/skills`, `.agents/skills`) are read so a project's skills work here as
they are. A `SKILL.md` that cannot be used (no frontmatter, invalid YAML, a missing or bad `name` or
`description`, a name that is not its folder's) is a `ConfigError` naming the file and line, kept in
`SkillSet.problems`; the other skills load regardless. A bad skill must not cost the person their agents.

Skills are read while the workspace lives, not once: `Skills.current()` looks at the folders again (a few
`stat` calls) and parses only when something changed, so a skill written in one cell is there for the next
prompt. The frontmatter is read with the markdown reader agents and commands use (`markdown.py`); the body
is taken as written, without `{env:...}` substitution.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .markdown import BODY_KEYS, read_markdown
from .parse import read_text
from .paths import levels, project_root
from .yaml_lines import check_size

SKILL_FILE = "SKILL.md"
PROJECT_SKILL_DIRS: tuple[tuple[str, str], ...] = (
    (".agents", "skills"), (".claude", "skills"), (".opencode", "skill"), (".opencode", "skills"))
"""Folders of a project level that hold skills, lowest precedence first."""
GLOBAL_SKILL_DIRS = ("skill", "skills")
"""Folders of the global config dir that hold skills."""
MAX_NAME = 64
MAX_DESCRIPTION = 1024
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""Lowercase letters and digits in words joined by single hyphens: a folder name on every system, and a
permission pattern with no wildcard in it."""

_KIND = "skill"
_BODY = BODY_KEYS[_KIND]


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: Path
    """Its `SKILL.md`, absolute."""

    @property
    def directory(self) -> Path:
        """The skill's folder: its resources are the other files in it."""
        return self.path.parent


@dataclass(frozen=True)
class Shadowed:
    """A skill not in force because a nearer one has its name."""

    skill: Skill
    by: Skill


@dataclass(frozen=True)
class SkillSet:
    """The skills in force at one moment, what they shadowed and the files that could not be used."""

    skills: tuple[Skill, ...] = ()
    """By name."""
    shadowed: tuple[Shadowed, ...] = ()
    problems: tuple[ConfigError, ...] = ()

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)


def skill_folders(directory: Path, global_dir: Path) -> list[Path]:
    """Every folder that may hold skills for `directory`, farthest (lowest precedence) first, existing or not."""
    return [folder for folder, _ in _folders(directory, global_dir)]


def _folders(directory: Path, global_dir: Path) -> list[tuple[Path, bool]]:
    """Each folder that may hold skills, and whether it lies above a working directory outside any repository,
    where anyone may have made it (`/tmp/.claude/skills`): its skills load only when they are the person's own."""
    directory = Path(os.path.abspath(directory))
    root = project_root(directory)
    in_repository = (root / ".git").exists()
    top = root if in_repository else Path(directory.anchor)
    folders = [(global_dir / name, False) for name in GLOBAL_SKILL_DIRS]
    for level in levels(directory, top):
        folders += [(level / parent / name, not in_repository and level != directory)
                    for parent, name in PROJECT_SKILL_DIRS]
    return folders


def find_skills(directory: Path, global_dir: Path) -> SkillSet:
    """The skills of `directory`: each name's nearest definition, the ones it shadows, and every problem."""
    return _parse(list(_candidates(_folders(directory, global_dir))))


def _candidates(folders: list[tuple[Path, bool]]) -> Iterator[tuple[Path, bool]]:
    """Each `<folder>/<name>/SKILL.md` that exists, farthest folder first, by name within a folder, with whether
    its owner must be checked."""
    for folder, check in folders:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue  # no such folder (the usual case), or one we may not read
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            path = Path(entry.path) / SKILL_FILE
            if path.is_file():
                yield path, check


def _parse(paths: list[tuple[Path, bool]]) -> SkillSet:
    found: dict[str, Skill] = {}
    shadowed: list[Shadowed] = []
    problems: list[ConfigError] = []
    for path, check in paths:
        try:
            if check:
                _check_owner(path)
            skill, _ = read_skill(path)
        except ConfigError as exc:
            problems.extend(exc.problems)
            continue
        if skill.name in found:
            shadowed.append(Shadowed(found[skill.name], skill))
        found[skill.name] = skill
    return SkillSet(tuple(sorted(found.values(), key=lambda s: s.name)), tuple(shadowed), tuple(problems))


def _check_owner(path: Path) -> None:
    """Refuse a skill outside the project that is not the person's (or the system's): in a shared folder such as
    `/tmp`, another user could have put it there to steer this person's agents."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return  # Windows: no owners to compare here
    try:
        owners = {path.stat().st_uid, path.parent.stat().st_uid}
    except OSError as exc:
        raise ConfigError(path, hint=f"cannot be read: {exc.strerror}") from None
    strangers = owners - {getuid(), 0}
    if strangers:
        raise ConfigError(path, hint=(
            f"belongs to another user (uid {min(strangers)}) and lies above the working directory outside any "
            "repository, so it is not loaded: anyone could have put it there. Move it into the project, or "
            "make the project a git repository"))


def read_skill(path: Path) -> tuple[Skill, str]:
    """The skill whose `SKILL.md` is `path`, and its instructions.

    Raises:
        ConfigError: the file cannot be read or used; every problem found in it (`.problems`), each with the
            line and key to fix.
    """
    folder = path.parent.name
    try:
        check_size(path.stat().st_size, path, "a SKILL.md file")
    except OSError as exc:
        raise ConfigError(path, hint=f"cannot be read: {exc.strerror}") from None
    text = read_text(path)
    if not text.startswith("---"):
        raise ConfigError(path, line=1, hint=(
            f"has no frontmatter, so it is not a skill: begin it with a `---` line, `name: {folder}`, "
            "`description: what it does and when to use it`, another `---` line, then the instructions"))
    layer = read_markdown(path, text, _KIND, folder)
    fields: dict[str, Any] = layer.data[_KIND][folder]
    line = {key: layer.lines.get((_KIND, folder, key)) for key in ("name", "description")}
    problems: list[ConfigError] = []
    name = fields.get("name")
    if name is None:
        problems.append(ConfigError(path, line=1, key="name",
                                    hint=f"is required: the skill's name, its folder's: name: {folder}"))
    elif not isinstance(name, str) or not NAME.fullmatch(name) or len(name) > MAX_NAME:
        problems.append(ConfigError(path, line=line["name"], key="name", hint=(
            f"{name!r} is not a skill name: at most {MAX_NAME} lowercase letters, digits and single hyphens "
            "inside, e.g. name: pdf-forms")))
    elif name != folder:
        problems.append(ConfigError(path, line=line["name"], key="name", hint=(
            f"{name!r} is not the name of its folder {folder!r}: rename the folder or write name: {folder}")))
    description = fields.get("description")
    if description is None or (isinstance(description, str) and not description.strip()):
        problems.append(ConfigError(path, line=line["description"] or 1, key="description", hint=(
            "is required: one or two sentences on what the skill does and when to use it; the model "
            "decides from it whether to load the skill")))
    elif not isinstance(description, str):
        problems.append(ConfigError(path, line=line["description"], key="description",
                                    hint=f"expected text, got {type(description).__name__}; put it in quotes"))
    elif len(description) > MAX_DESCRIPTION:
        problems.append(ConfigError(path, line=line["description"], key="description", hint=(
            f"is {len(description)} characters long; at most {MAX_DESCRIPTION}: say when to use the skill "
            "and leave the how to its body")))
    if problems:
        raise ConfigError.combine(problems)
    assert isinstance(name, str) and isinstance(description, str)
    return Skill(name, " ".join(description.split()), Path(os.path.abspath(path))), str(fields.get(_BODY, ""))


Stamp = tuple[tuple[str, int, int], ...]


@dataclass
class Skills:
    """The skills of one working directory, read again when their files change.

    Args:
        directory: the working directory; skills are looked for from the git root down to it.
        global_dir: the global config dir.
    """

    directory: Path
    global_dir: Path
    _stamp: Stamp | None = field(default=None, repr=False)
    _set: SkillSet = field(default_factory=SkillSet, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def current(self) -> SkillSet:
        """The skills as the files are now; parsed again only when a `SKILL.md` was added, removed or edited."""
        paths = list(_candidates(_folders(self.directory, self.global_dir)))
        stamp = _stamp_of(paths)
        with self._lock:
            if stamp != self._stamp:
                self._set, self._stamp = _parse(paths), stamp
            return self._set

    def load(self, name: str) -> tuple[Skill, str]:
        """The skill `name` in force now and its instructions, read from its file at this moment.

        Raises:
            KeyError: no skill of that name is in force.
            ConfigError: its `SKILL.md` changed since and can no longer be used.
        """
        skill = self.current().get(name)
        if skill is None:
            raise KeyError(name)
        return read_skill(skill.path)

    def where(self, skill: Skill, root: Path) -> str:
        """Where a skill came from, as a person reads it: relative to the project root inside it, `(global)`
        for the global config dir, else the absolute path."""
        path = skill.path
        if self.global_dir in path.parents:
            return f"{path} (global)"
        return path.relative_to(root).as_posix() if root in path.parents else str(path)


def _stamp_of(paths: list[tuple[Path, bool]]) -> Stamp:
    stamp: list[tuple[str, int, int]] = []
    for path, _ in paths:
        try:
            info = path.stat()
            stamp.append((str(path), info.st_mtime_ns, info.st_size))
        except OSError:
            stamp.append((str(path), -1, -1))
    return tuple(stamp)
