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
they are, frontmatter and all (`FIELDS` says what each field does here). A `SKILL.md` that cannot be used (no
frontmatter, invalid YAML, a bad `name`, a name that is not its folder's, no `description`) is a
`ConfigError` naming the file and line, kept in `SkillSet.problems`; the other skills load regardless. A bad
skill must not cost the person their agents.

What is only unusual is not refused: `name` defaults to the folder's name, as in Claude Code; a description past
the Agent Skills format's 1,024 characters (Anthropic's own skills have such) loads with a note, and only the
tool listing shortens it (tool/skill.py); a field this program does not act on is named in a note, so the
person knows that `allowed-tools` or `model` had no effect here. Notes are in `SkillSet.notes`.

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
"""The Agent Skills format's bound on `description`; past it a skill still loads, with a note (see FIELDS)."""
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""Lowercase letters and digits in words joined by single hyphens: a folder name on every system, and a
permission pattern with no wildcard in it."""

_KIND = "skill"
_BODY = BODY_KEYS[_KIND]

HONOURED = "honoured"
IGNORED = "ignored"
NOTED = "ignored, with a note"
FIELDS: dict[str, tuple[str, str]] = {
    "name": (HONOURED, "the skill's name; the folder's name when left out (as in Claude Code)"),
    "description": (HONOURED, "what the model decides by; any length loads, the tool's listing shows the first "
                              "300 characters and a note says when it is past the format's 1,024"),
    "when_to_use": (HONOURED, "Claude Code's second half of the description: appended to it"),
    "disable-model-invocation": (HONOURED, "true keeps the skill from the model: not in the skill tool's listing, "
                                           "and a call naming it is refused; the person runs it as /name"),
    "user-invocable": (HONOURED, "false: the skill is no /name command, only something the model loads"),
    "argument-hint": (IGNORED, "shown by Claude Code's `/` menu; here `/help` shows the description"),
    "license": (IGNORED, "information for people; it changes nothing"),
    "metadata": (IGNORED, "information for people and other tools"),
    "compatibility": (IGNORED, "information for people"),
    "version": (IGNORED, "information for people"),
    "allowed-tools": (NOTED, "Claude Code lets these tools run without asking while the skill is active; here a "
                             "skill never changes what is allowed, only the configuration's rules do"),
    "model": (NOTED, "a skill runs with the agent's model here"),
    "effort": (NOTED, "a skill runs with the agent's settings here"),
    "context": (NOTED, "a skill's instructions join the conversation that loads it; `context: fork` is not done"),
    "agent": (NOTED, "a skill runs in the agent that loads it"),
    "hooks": (NOTED, "a skill runs no hooks here"),
    "paths": (NOTED, "a skill is offered whatever files are being worked on"),
    "shell": (NOTED, "a skill's instructions run no commands of their own here"),
}
"""Every frontmatter field of Claude Code's and OpenCode's skills (and the Agent Skills format's), with what it
does here. A field not named is noted as unknown. Only a bad `name`, no description, or a switch that is not
true or false keeps a skill from loading (a switch read wrong could offer the model a skill kept from it)."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: Path
    """Its `SKILL.md`, absolute."""
    model_invocable: bool = True
    """False for `disable-model-invocation: true`: the model is neither shown the skill nor allowed to load it."""
    user_invocable: bool = True
    """False for `user-invocable: false`: background knowledge for the model, not a task a person starts."""
    notes: tuple[str, ...] = ()
    """What the person should know about the file that did not stop it loading (`file:line: ...`)."""

    @property
    def directory(self) -> Path:
        """The skill's folder: its resources are the other files in it."""
        return self.path.parent


PERSON_ONLY = ("kept from the model (disable-model-invocation: true): run it yourself as the command /{name}")
"""What listings say of a skill kept from the model: how the person can still use it."""


def invocation(skill: Skill) -> str:
    """How a listing qualifies a skill: empty for one the model loads when a task calls for it."""
    if not skill.model_invocable:
        return PERSON_ONLY.format(name=skill.name)
    return "" if skill.user_invocable else "background knowledge for the model, not a command (user-invocable: false)"


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

    @property
    def notes(self) -> list[str]:
        """The notes of the skills in force (a shadowed skill's are moot)."""
        return [note for skill in self.skills for note in skill.notes]

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)


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
    line = {key: layer.lines.get((_KIND, folder, key)) for key in fields}
    problems: list[ConfigError] = []
    notes = list(layer.notes)
    name = fields.get("name")
    if name is None:  # Claude Code's default; OpenCode requires it, and it must be this anyway
        name = folder
    if not isinstance(name, str) or not NAME.fullmatch(name) or len(name) > MAX_NAME:
        defaulted = "" if fields.get("name") is not None else \
            "; without `name:` the folder's name is the skill's, so rename the folder"
        problems.append(ConfigError(path, line=line.get("name") or 1, key="name", hint=(
            f"{name!r} is not a skill name: at most {MAX_NAME} lowercase letters, digits and single hyphens "
            f"inside, e.g. name: pdf-forms{defaulted}")))
    elif name != folder:
        problems.append(ConfigError(path, line=line["name"], key="name", hint=(
            f"{name!r} is not the name of its folder {folder!r}: rename the folder or write name: {folder}")))
    description = _description(fields, path, line, problems, notes)
    model_invocable = _switch(fields, "disable-model-invocation", False, path, line, problems) is not True
    user_invocable = _switch(fields, "user-invocable", True, path, line, problems) is not False
    for key in fields:
        where = f"{path}:{line.get(key) or 1}"
        if key not in FIELDS and key != _BODY:
            notes.append(f"{where}: unknown skill field `{key}`; it is ignored (known: {', '.join(FIELDS)})")
        elif key in FIELDS and FIELDS[key][0] == NOTED:
            notes.append(f"{where}: `{key}` is ignored here: {FIELDS[key][1]}")
    if problems:
        raise ConfigError.combine(problems)
    assert isinstance(name, str) and description is not None
    return Skill(name, description, Path(os.path.abspath(path)), model_invocable=model_invocable,
                 user_invocable=user_invocable, notes=tuple(notes)), str(fields.get(_BODY, ""))


def _description(fields: dict[str, Any], path: Path, line: dict[str, int | None], problems: list[ConfigError],
                 notes: list[str]) -> str | None:
    """The description the model decides by, with Claude Code's `when_to_use` after it, on one line.

    Only a missing or empty one is a problem: the model could not know when to load the skill. A long one is
    the author's choice (Anthropic's own `claude-api` skill has over a thousand characters) and is noted.
    """
    parts: list[str] = []
    for key in ("description", "when_to_use"):
        value = fields.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            problems.append(ConfigError(path, line=line.get(key), key=key,
                                        hint=f"expected text, got {type(value).__name__}; put it in quotes"))
            continue
        parts.append(" ".join(str(value).split()))
    description = " ".join(p for p in parts if p)
    if not description:
        if not any(p.key in ("description", "when_to_use") for p in problems):
            problems.append(ConfigError(path, line=line.get("description") or 1, key="description", hint=(
                "is required: one or two sentences on what the skill does and when to use it; the model "
                "decides from it whether to load the skill")))
        return None
    if len(description) > MAX_DESCRIPTION:
        notes.append(f"{path}:{line.get('description') or 1}: the description is {len(description):,} characters, "
                     f"past the {MAX_DESCRIPTION:,} of the Agent Skills format; the skill loads, and the skill "
                     "tool's listing shows its beginning, so put when to use the skill first")
    return description


def _switch(fields: dict[str, Any], key: str, default: bool, path: Path, line: dict[str, int | None],
            problems: list[ConfigError]) -> bool:
    """A true/false field; the strings `"true"`/`"false"` count (some generators quote every value)."""
    value = fields.get(key, default)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        value = value.strip().lower() == "true"
    if not isinstance(value, bool):
        problems.append(ConfigError(path, line=line.get(key), key=key, hint=f"{value!r} is not true or false"))
        return default
    return value


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
