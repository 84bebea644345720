"""The files that steer agents or make code run later, and how a sandboxed command is kept from changing them.

Which paths: the config files the loader reads (`opencode.yaml|yml|json`), `.opencode/`'s, the skill folders
(`.claude/skills`, `.agents/skills`) and the instruction files (`AGENTS.md`, `CLAUDE.md`) at the project root and
at every folder down to the workspace directory;
`.git/hooks/`, `.git/config` (a `.git` file, in a worktree) and the folder `core.hooksPath` names; and the
global config folder as a whole. A change to any of them outlives the command that made it: the next
workspace reads the config (`sandbox: off`, `"*": allow`), the next `git commit` runs the hook, unconfined.

What holds them, inside bubblewrap (`bwrap.py` binds what `Guard` lists; Seatbelt denies the same paths):

- A path that exists is bound read-only onto itself: writing, truncating, replacing, renaming or removing
  it fails (a mount point cannot be renamed or unlinked, EBUSY), and no hard link to it can be made from
  another mount (EXDEV). Its folders inside the writable area (`.git` for `.git/hooks`) are bound onto
  themselves too, so they cannot be renamed away and rebuilt (`mv .git x; git init`).
- A path that does not exist yet cannot be bound without making a mount point for it in the person's
  project, visible to everything outside while the command runs (an empty `opencode.json` that no longer
  parses, a `.git` folder that makes the project a repository). The exception is a missing `.git/hooks` under
  a real `.git` (`sealable`): an empty read-only tmpfs is mounted there, since its mount point, an empty
  folder left in `.git`, changes nothing, and a hook there must not exist even for the moment between two
  after-checks of a process that outlives its call (a server dropping `pre-commit` as the person commits).
  For every other missing path nothing is made: after the command,
  `Guard.undo` looks for what appeared where nothing was (the highest such folder: a whole fresh `.git`)
  and moves it out of the project into the quarantine folder beside the tool output, and the result tells
  the model. This runs when bubblewrap has returned, and by then nothing sandboxed can write any more: the
  PID namespace ends with its first process, which the kernel tears down (killing every other process in
  it) before that process is reaped; `ShellRun` waits for bubblewrap's process group to be gone first.
  Nothing is placed in the project beforehand, so concurrent commands never remove each other's protection.
  A process that outlives a call (a local MCP server) gets the same check after each call, every
  `treatment.WATCH_S` while it lives and at its end (`treatment.py`, the one door every launcher uses).
- What a file tool writes to these paths asks `agent_config` (see `access.py`) and is taken out of the
  check of commands running at that moment, so a permitted write is not moved away as if a command made it.
  In `.opencode/` only what the loader reads is protected (config, agents, commands, skills): the plan
  agent's plans there are its own to write.

What does not hold: with `sandbox: off`, or where no sandbox exists, only the rules stand (the bash tool
asks `agent_config` for a redirection into these paths; code it cannot see can still write them). A file the
person creates by hand at one of the missing paths while a sandboxed command runs is moved away with the
command's (it is in the quarantine folder, and the model is told where). Config files named by
`OPENCODE_NB_CONFIG` are not on the list.

The files `instructions` entries name (`Protected.instructions`) are, where they lie inside the project: each
reaches every system prompt. For a glob, the matches are those found when the config was loaded (the
workspace opening, or a config change the guard settled): they are protected, and they are what the prompt
reads (`session/loop.py` reads `LoadedConfig.instruction_files`, never the glob again). A file that comes to
match later (a command or a permitted write making `docs/new.md` for `docs/*.md`) is left out of every prompt
until the config is loaded again, and a reload while a process of ours is alive judges it as a loosening
(`config/reaches.py`): the person confirms it. A new match present when the person next opens the workspace
is taken as theirs.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import fs
from ..config.paths import CONFIG_NAMES, DEFINITION_DIRS, PROJECT_DIR, global_config_dir, levels
from ..config.skills import PROJECT_SKILL_DIRS

AGENT_CONFIG = "agent_config"
"""Asked, on top of `edit`, before a file tool writes one of the protected paths; only rules naming it count."""
AGENT_CONFIG_REASON = ("This file steers the agents or runs code later (configuration, instructions, git hooks "
                       "or git config): a change here can loosen every later permission or sandbox.")
INSTRUCTION_NAMES = ("AGENTS.md", "CLAUDE.md")
"""Instruction files the system prompt reads from the project's folders (`session/system.py`)."""
GIT_PROTECTED = ("hooks", "config")
"""What of a `.git` folder makes git run code: hooks, and the config (`core.hooksPath`, `core.fsmonitor`,
aliases, `core.pager`)."""
PROJECT_ENTRIES = (*CONFIG_NAMES, *(d for dirs in DEFINITION_DIRS.values() for d in dirs), "skill", "skills")
"""What the loader reads in a `.opencode` folder (config, agents, commands, skills); plans there are the plan
agent's to write."""
SKILL_DIRS = tuple((parent, name) for parent, name in PROJECT_SKILL_DIRS if parent != PROJECT_DIR)
"""Skill folders outside `.opencode` (`.claude/skills`, `.agents/skills`): skills steer agents as much as
`.opencode/`'s do. Only these folders are protected, not the rest of `.claude` or `.agents`."""
_SHARED_FOLDERS = frozenset({PROJECT_DIR, *(parent for parent, _ in SKILL_DIRS)})
"""Folders that hold protected paths and other things: when a command makes one, only the protected paths in it
are moved away."""
QUARANTINE = "quarantine"
"""Folder of the data dir where what a sandboxed command made at a protected path is moved to."""
SETTLE_S = 2.0
"""How long to wait, at most, for a stopped sandbox's processes to be gone before looking."""


@dataclass(frozen=True)
class Protected:
    """One project's protected paths.

    Args:
        root: the project root.
        directory: the workspace directory (config and instructions are read from root down to it).
        global_dir: the global config folder.
    """

    root: Path
    directory: Path | None = None
    global_dir: Path | None = None
    instructions: Callable[[], Iterable[Path]] | None = None
    """The files the config's `instructions` entries name, globs expanded when the config was loaded
    (`LoadedConfig.instruction_files`): those inside the project are protected as `AGENTS.md` is."""
    managed: Path | None = None
    """The administrator's managed configuration file, wherever it is: no agent writes it."""

    def paths(self) -> list[Path]:
        """Every protected path, existing or not, as an absolute path with the project's links resolved."""
        root = Path(os.path.realpath(self.root))
        directory = Path(os.path.realpath(self.directory)) if self.directory else root
        found: list[Path] = []
        for level in levels(directory, root):
            found += [level / name for name in (*CONFIG_NAMES, *INSTRUCTION_NAMES)]
            found += [level / PROJECT_DIR / name for name in PROJECT_ENTRIES]
            found += [level / parent / name for parent, name in SKILL_DIRS]
        git = root / ".git"
        if git.is_file() and not git.is_symlink():
            found.append(git)  # a worktree: the file says where its repository is
        else:
            found += [git / name for name in GIT_PROTECTED]
        found += hooks_dirs(root)
        for file in self.instructions() if self.instructions is not None else ():
            real = Path(os.path.realpath(file))
            if root in real.parents:  # outside, a write asks `external_directory` and the sandbox has it read-only
                found.append(real)
        if self.global_dir is not None:
            found.append(Path(os.path.realpath(self.global_dir)))
        if self.managed is not None:
            found.append(Path(os.path.realpath(self.managed)))
        unique: list[Path] = []
        for path in found:
            if path not in unique:
                unique.append(path)
        return unique

    def covers(self, path: Path) -> bool:
        """Whether `path` (absolute, links resolved) is a protected path or lies under one."""
        return any(path == p or p in path.parents for p in self.paths())

    def pattern(self, path: Path) -> str:
        """The permission pattern for `path`: relative to the project, else absolute."""
        root = Path(os.path.realpath(self.root))
        return path.relative_to(root).as_posix() if path == root or root in path.parents else str(path)


def for_project(root: Path, directory: Path | None = None, like: Protected | None = None) -> Protected:
    """The protected paths of a project, with the global config folder of this process's environment and the
    instruction files of `like` (the workspace's, `ShellSandbox.protected`) when it is the same project's."""
    same = isinstance(like, Protected) and os.path.realpath(like.root) == os.path.realpath(root)
    return Protected(root, directory, global_config_dir(), like.instructions if same and like else None)


def sealable(path: Path) -> bool:
    """Whether a missing protected folder is sealed rather than only looked at afterwards: `.git/hooks` of a real
    `.git` folder. bubblewrap makes the mount point in the person's project and it stays there, empty, after
    the sandbox has gone (measured with bubblewrap 0.8: an empty `.git/hooks`, as `git init` makes one), which
    changes nothing git does. The other missing folders are not sealed: an empty `.opencode/` (and with it
    six empty `agent/`, `command/`, `skills/`... folders, or `.opencode` left unwritable for the plan agent's
    plans), `.claude/skills` or `.agents/skills`, or the folder `core.hooksPath` names (a `.githooks` at the
    root), would appear in the person's project as clutter they never made; they keep the after-check."""
    return path.name == "hooks" and path.parent.name == ".git" and path.parent.is_dir() \
        and not path.parent.is_symlink()


_HOOKS_PATH = re.compile(r"""^\s*hookspath\s*=\s*("?)(.*?)\1\s*(?:[#;].*)?$""", re.IGNORECASE)


def hooks_dirs(root: Path) -> list[Path]:
    """The hook folders `core.hooksPath` names in the project's own `.git/config` (others, in the person's
    global config, are outside the project and ask `external_directory` anyway)."""
    try:
        text = (root / ".git" / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found: list[Path] = []
    section = ""
    for line in text.splitlines():
        header = re.match(r"^\s*\[\s*([^\]\s\"]+)", line)
        if header:
            section = header.group(1).casefold()
            continue
        value = _HOOKS_PATH.match(line) if section == "core" else None
        if value and value.group(2):
            folder = Path(os.path.expanduser(value.group(2)))
            found.append(Path(os.path.realpath(folder if folder.is_absolute() else root / folder)))
    return found


# ---------------------------------------------------------------------------------------------- one command


@dataclass(eq=False)
class Guard:
    """What one sandboxed command must leave as it found it, taken just before it starts."""

    kept: tuple[Path, ...] = ()
    """Protected paths that exist: bound read-only."""
    pinned: tuple[Path, ...] = ()
    """Their existing folders inside a writable area: bound onto themselves so they cannot be renamed."""
    missing: tuple[Path, ...] = ()
    """The highest missing folder or file of each protected path that does not exist: looked for afterwards."""
    links: dict[Path, tuple[str, int]] = field(default_factory=dict)
    """Protected paths that are symbolic links: their target and inode, to put back if replaced."""
    written: set[Path] = field(default_factory=set)
    """Paths a file tool wrote, with permission, while the command ran: not the command's doing."""
    areas: dict[Path, Path] = field(default_factory=dict)
    """The writable folder each missing path lies in: what is moved away keeps its place under that name."""
    within: dict[Path, list[Path]] = field(default_factory=dict)
    """For a missing `.opencode` (or `.claude`, `.agents`) folder: the protected paths in it. Only those are moved
    away if it appears, so a plan the plan agent writes meanwhile stays."""
    sealed: tuple[Path, ...] = ()
    """Missing folders whose appearance as an empty folder is harmless (`sealable`): an empty read-only tmpfs is
    mounted there, so nothing can be made in them inside the sandbox, not even for the moments between two
    after-checks. They stay in `missing` too: what appears in them from outside is looked at as before."""
    bound: dict[Path, tuple[int, int]] = field(default_factory=dict)
    """Device and inode of each kept and pinned path as it was bound. One replaced from outside (the person's
    `git remote add` renames `config.lock` over `.git/config`; an editor saves by a rename) is no longer held in
    a sandbox that lives on: the kernel detaches a mount whose mount point is unlinked or renamed over from
    another mount namespace (measured with bubblewrap 0.8), and the path is then as writable as the project."""

    @classmethod
    def taken(cls, protected: Iterable[Path], writable: Sequence[Path]) -> Guard:
        """The state of the protected paths that lie in a writable folder (the others are read-only anyway)."""
        kept: list[Path] = []
        pinned: list[Path] = []
        missing: list[Path] = []
        links: dict[Path, tuple[str, int]] = {}
        areas: dict[Path, Path] = {}
        within: dict[Path, list[Path]] = {}
        bound: dict[Path, tuple[int, int]] = {}
        sealed: list[Path] = []
        for path in protected:
            area = next((w for w in writable if path != w and w in path.parents), None)
            if area is None:
                continue
            chain = [p for p in reversed(path.parents) if area in p.parents] + [path]
            for step in chain:
                try:
                    info = step.lstat()
                except OSError:
                    if step not in missing:
                        missing.append(step)
                        areas[step] = area
                        if step == path and sealable(step):
                            sealed.append(step)
                    if step != path and step.name in _SHARED_FOLDERS:
                        within.setdefault(step, []).append(path)
                    break
                if step.is_symlink():
                    links[step] = (os.readlink(step), info.st_ino)
                    break
                bound[step] = (info.st_dev, info.st_ino)
                if step == path:
                    kept.append(step)
                elif step not in pinned:
                    pinned.append(step)
        return cls(tuple(kept), tuple(pinned), tuple(missing), links, areas=areas, within=within, bound=bound,
                   sealed=tuple(sealed))

    def unbound(self) -> list[Path]:
        """Kept and pinned paths that are no longer what was bound (replaced, renamed or removed): a process
        still running in this sandbox may write them now (see `bound`)."""
        gone: list[Path] = []
        for path, (device, inode) in self.bound.items():
            try:
                info = path.lstat()
            except OSError:
                gone.append(path)
                continue
            if (info.st_dev, info.st_ino) != (device, inode):
                gone.append(path)
        return gone

    def undo(self, quarantine: Path) -> list[str]:
        """Move out of the project what the command made at a protected path; put back replaced links.

        Returns:
            What was undone, one line each, for the model.
        """
        said: list[str] = []
        stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}-{next(_runs)}"
        for top in self.missing:
            for path in self._made(top):
                moved = _move_away(path, quarantine / stamp, self.areas.get(top))
                said.append(f"{path} (made by the command; moved to {moved})" if moved else
                            f"{path} (made by the command; it could not be moved away: remove it by hand)")
            if top in self.within:
                _remove_empty(top, self.within[top])
        for path, (target, inode) in self.links.items():
            try:
                same = path.is_symlink() and path.lstat().st_ino == inode
            except OSError:
                same = False
            if same or self._tool_wrote(path):
                continue
            if os.path.lexists(path):
                _move_away(path, quarantine / stamp, None)
            try:
                fs.make_symlink(Path(path.anchor), path, target)  # never made through a folder swapped for a link
                said.append(f"{path} (a link the command replaced; put back)")
            except OSError as exc:
                said.append(f"{path} (a link the command replaced; could not be put back: {exc.strerror})")
        return said


    def _made(self, top: Path) -> list[Path]:
        """What the command made at or under a missing `top` that must go: all of it, or for a `.opencode` (or
        `.claude`, `.agents`) folder that is a real folder now, the protected entries in it (or a link on the way
        to one)."""
        if not os.path.lexists(top) or self._tool_wrote(top):
            return []
        if top in self.sealed and top.is_dir() and not top.is_symlink():
            # The mount point bubblewrap made for the seal stays; only what is in it (put there from outside, or
            # by the process once the person renamed the folder away and the seal went with it) must go.
            with contextlib.suppress(OSError):
                return [top / name for name in sorted(os.listdir(top)) if not self._tool_wrote(top / name)]
        inner = self.within.get(top)
        if inner is None or top.is_symlink() or not top.is_dir():
            return [top]
        made: list[Path] = []
        for path in inner:
            step = top
            for name in path.relative_to(top).parts:
                step = step / name
                if not os.path.lexists(step):
                    break
                if (step == path or step.is_symlink()) and step not in made and not self._tool_wrote(step):
                    made.append(step)
                    break
        return made

    def _tool_wrote(self, path: Path) -> bool:
        return any(w == path or path in w.parents for w in self.written)


def _remove_empty(top: Path, inner: list[Path]) -> None:
    """The folders the command made on the way to what was moved away, where nothing else is left in them."""
    folders = sorted({p for path in inner for p in path.parents if p == top or top in p.parents}, reverse=True)
    for folder in folders:
        with contextlib.suppress(OSError):
            if folder.is_dir() and not folder.is_symlink():
                folder.rmdir()  # only an empty folder goes


def _move_away(path: Path, folder: Path, area: Path | None) -> Path | None:
    """Moved by `fs.move`, walking from `/` along the path as the guard resolved it: a folder on the way that
    the command swapped for a link (`.claude` -> `~/.claude`) is refused, so nothing outside is ever moved."""
    inside = area.name / path.relative_to(area) if area is not None else path.relative_to(path.anchor)
    try:
        fs.move(Path(path.anchor), path, folder, inside)
    except OSError:
        return None
    return folder / inside


def undo_note(undone: Sequence[str], who: str = "The command") -> str:
    """What the model reads when its command (or `who`: an MCP server) changed protected paths."""
    items = "; ".join(undone)
    return (f"\n\n({who} created or replaced files that steer the agents or run code later, which sandboxed "
            f"processes may not change: {items}. Nothing of it is in effect. To change these files use the write "
            "or edit tool, which asks the person, or ask the person to do it.)")


# ---------------------------------------------------------------------------------------------- file tools


_runs = itertools.count(1)
_running: list[Guard] = []
_running_lock = threading.Lock()


def started(guard: Guard) -> None:
    """`guard`'s command is running: writes the file tools make meanwhile are exempted from its check."""
    with _running_lock:
        _running.append(guard)


def finished(guard: Guard) -> None:
    with _running_lock:
        if guard in _running:
            _running.remove(guard)


def permitted_write(path: Path) -> None:
    """A file tool is about to write `path` with the person's (or a rule's) permission: the commands running
    now must not take it for their own doing."""
    with _running_lock:
        for guard in _running:
            guard.written.add(path)
