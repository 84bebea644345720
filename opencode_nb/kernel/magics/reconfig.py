"""Keeping the notebook's workspace in step with its configuration files, and saying what it found.

Before each `%agent` cell the files are compared with what the workspace read (a few `stat` calls). A
change is read again at once, so editing `opencode.yaml` needs no `%agent reload`. A changed file that has
problems does not throw away a configuration that works: the notebook keeps the previous one, says so with
every problem in it, then in one line (`banner`: file, line, what is in force) in every `%agent` cell until
the files change again, and reads them again at the next cell after they do. A mistake in something that
restricts (`ConfigError.restricting`: a misspelt `permission:`, `deny` or tool name, an agent refused for a key
that looks like a restriction) has no fallback: the configuration read before would allow what the file meant
to take away, so agent runs are refused (`refuse_prompt`) until it is fixed; subcommands still run. It is the
notebook agent's one gate (`NotebookAgent.gate`), which every run passes whatever started it: a prompt cell, a
one-line prompt, a slash command, a plan's step cell, `%agent plan run`, the steps an approval runs.
Nothing is read again while an agent runs: its tools and rules stay what they were when it started.

A change that agents may have made and that loosens what they may do is held by the workspace
(config/guard.py): the notebook shows it once as a prompt (Apply / Keep previous, or `%agent config
accept|keep`), and the configuration confirmed before stays in force until the person answers. A click may
come on another thread while a cell runs, so it only records the answer; the next cell reads the files again.

Warnings (an unknown key, an unset variable) are shown once per reading, as plain lines in the cell that
first uses the configuration; Python's own display of them (with a line of our source under each) is
turned off in the kernel while the extension is loaded.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Protocol

from ...errors import ConfigError

if TYPE_CHECKING:
    from ...config.load import Stamp
    from ...workspace import Workspace


class ConfigHost(Protocol):
    """What keeping the configuration current needs of the kernel (its `NotebookAgent` is one)."""

    session_id: str | None
    """The notebook's current session, carried over to a workspace read anew."""

    @property
    def busy(self) -> bool:
        """Whether an agent runs: nothing is read again until none does."""
        ...

    def workspace(self) -> Workspace: ...

    def reset_workspace(self) -> None: ...


class ConfigWatch:
    def __init__(self, agent: ConfigHost) -> None:
        self.agent = agent
        self._warned: weakref.WeakSet[Workspace] = weakref.WeakSet()
        """Workspaces whose warnings were shown."""
        self._refused: Stamp | None = None
        """The files as they were when they were last found wrong: read again only once they change."""
        self._broken: ConfigError | None = None
        """What was wrong with them then: every later cell says so in a line (`banner`) until they are fixed."""
        self._asked: str | None = None
        """The held change whose prompt was shown: shown once per change."""
        self._reread = False
        """The person accepted a held change from its prompt: read the files again at the next cell."""
        self.kept = False
        """As of the latest `refresh`: the files changed and were found wrong, so the workspace in use is the
        one read before them."""

    def refresh(self, *, runs: bool = False) -> list[str]:
        """Read the configuration again if its files changed; the lines the person should read now.

        `runs`: the cell is about to start an agent run, so a mistake that blocks runs is left to the refusal
        (`refuse_prompt`) to say, once, rather than said here and again by it.

        Raises:
            ConfigError: the configuration cannot be read and there is no previous one to keep (the first
                reading in this kernel failed): every problem, so all can be fixed at once.
        """
        ws = self.agent.workspace()
        notes: list[str] = []
        stamp = ws.loaded.on_disk()
        due = (stamp != ws.loaded.stamp and stamp != self._refused) or self._reread
        if due and not self._running():
            self._reread = False
            try:
                check(ws)
            except ConfigError as exc:
                self._refused, self._broken = stamp, exc
                notes.append(kept_message(exc))
            else:
                self._refused = self._broken = None
                changed = sorted({path for path, *_ in set(stamp) ^ set(ws.loaded.stamp)})
                ws = self.reload(checked=True)
                if ws.config_held is None:  # else its prompt says what happened
                    notes.append(f"Configuration read again: {', '.join(changed)} changed." if changed
                                 else "Configuration read again: the change you applied is in force.")
        elif stamp == self._refused and self._broken is not None:
            notes.append(banner(self._broken))
        self.kept = stamp == self._refused
        refused = [] if self.kept else [refused_banner(ws.loaded.refused)] if ws.loaded.refused else []
        warnings = self.warnings(ws)
        if runs and self.blocks_runs():
            said = tuple(ws.loaded.refused.values())  # the refusal names them
            notes, refused = [], []
            warnings = [line for line in warnings if not any(problem in line for problem in said)]
        return notes + refused + warnings

    def blocks_runs(self) -> bool:
        """Whether `refuse_prompt` refuses now (as of the latest `refresh`)."""
        restricting = self.kept and self._broken is not None and self._broken.restricting
        return restricting or bool(not self.kept and self.agent.workspace().loaded.refused)

    def refuse_prompt(self) -> None:
        """Stop a prompt while a mistake in a restriction stands (a misspelt `permission:`, `deny` or tool name).

        The configuration read before is no fallback then: it would allow what the file meant to take away.
        Subcommands are not stopped, so `%agent config` and `%agent reload` still help to fix it.

        Raises:
            UsageError: the file and line, and that prompts wait until it is fixed.
        """
        from IPython.core.error import UsageError

        if self.kept and self._broken is not None and self._broken.restricting:
            raise UsageError(f"{banner(self._broken)}\n{self._broken}")
        refused = self.agent.workspace().loaded.refused
        if refused and not self.kept:
            raise UsageError(refused_banner(refused) + "".join(f"\n{problem}" for problem in refused.values()))

    def reload(self, *, checked: bool = False) -> Workspace:
        """A new workspace from the files as they are now; the notebook's session carries on.

        Args:
            checked: the files were just found right; do not read them an extra time first.

        Raises:
            UsageError: the files have problems; the workspace in use is kept, and the message says so.
            ConfigError: the files have problems and no workspace was ever built here to keep.
        """
        agent = self.agent
        try:
            previous: Workspace | None = agent.workspace()
        except ConfigError:
            previous = None  # nothing to keep: building anew below says what is wrong
        if previous is not None and not checked:
            try:
                check(previous)
            except ConfigError as exc:
                from IPython.core.error import UsageError

                self._refused, self._broken = previous.loaded.on_disk(), exc
                raise UsageError(kept_message(exc)) from None
        current = agent.session_id
        agent.reset_workspace()
        ws = agent.workspace()
        agent.session_id = current
        return ws

    def warnings(self, ws: Workspace) -> list[str]:
        """The workspace's warnings, the first time they are asked for."""
        if ws in self._warned:
            return []
        self._warned.add(ws)
        held = ws.config_held.message() if ws.config_held is not None else None
        return [f"warning: {w}" for w in ws.warnings if w != held]  # held: shown as its prompt

    def held_prompt(self) -> dict[str, object] | None:
        """The prompt for a configuration change that waits for the person, once per change; None if none does."""
        ws = self.agent.workspace()
        held = ws.config_held
        if held is None or held.kept or held.digest == self._asked:
            return None
        self._asked = held.digest
        from ...views.config_change import ConfigChangeView

        return ConfigChangeView(held, apply=lambda: self._accept(ws), keep=lambda: self._keep(ws)).bundle()

    def answer(self, choice: str) -> str:
        """`%agent config accept|keep`: the person's answer to the held change.

        Raises:
            UsageError: not `accept` or `keep`, or accepting while agents run (the files are read again only
                between runs).
        """
        from IPython.core.error import UsageError

        if choice not in ("accept", "keep"):
            raise UsageError(f"%agent config: {choice!r} is not a choice; %agent config accept applies a held "
                             "configuration change, %agent config keep keeps the one confirmed before")
        ws = self.agent.workspace()
        if ws.config_held is None:
            return "No configuration change waits for confirmation: the files are in force as they are."
        if choice == "keep":
            return self._keep(ws)
        if self._running():
            raise UsageError("%agent config accept: agents are running; accept when they are done (or after "
                             "%agent stop), so no run changes configuration under its feet")
        said = self._accept(ws)
        self._reread = False
        self.reload(checked=True)
        return said

    def _accept(self, ws: Workspace) -> str:
        held = ws.config_held
        ws.accept_config()
        self._reread = True
        items = "".join(f"\n  {item}" for item in held.loosenings) if held is not None else ""
        return f"Applied: the configuration files as they are now are in force from the next prompt.{items}"

    def _keep(self, ws: Workspace) -> str:
        if ws.config_held is not None:
            ws.config_guard.keep(ws.config_held.digest)
        return ("Kept the configuration confirmed before; this change is not applied and not asked about again "
                "(a later change of the files is).")

    def _running(self) -> bool:
        return self.agent.busy


def check(ws: Workspace) -> None:
    """Read the workspace's configuration files again, only to see whether they are right.

    Raises:
        ConfigError: every problem in them.
    """
    from ...config.load import load_config

    load_config(ws.directory, env=ws.env)  # its warnings: the new workspace shows them, once


def kept_message(exc: ConfigError) -> str:
    if exc.restricting:
        return (f"The configuration files changed but cannot be used, and a mistake is in a restriction: prompts "
                f"are blocked until it is fixed (the configuration read before would allow what the file meant to "
                f"take away):\n{exc}\nFix the file; it is read again at the next %agent cell.")
    return (f"The configuration files changed but cannot be used, so this notebook keeps the configuration it "
            f"read before:\n{exc}\nFix the file; it is read again at the next %agent cell.")


def banner(exc: ConfigError) -> str:
    """One line for every cell while the files stay broken: where, and what is in force meanwhile."""
    where = place_of(exc)
    count = len(exc.problems)
    problems = f"{count} problem{'s' * (count != 1)}; %agent reload lists {'them' if count != 1 else 'it'}"
    if exc.restricting:
        return (f"⚠ {where} is broken ({problems}): a mistake in a restriction, so prompts are blocked until it "
                "is fixed; the configuration read before would allow what it meant to take away.")
    return f"⚠ {where} is broken ({problems}): the configuration read before is in force until it is fixed."


def refused_banner(refused: dict[str, str]) -> str:
    """One line for every cell while an agent is refused for a key that looked like a restriction."""
    names = ", ".join(refused)
    first = next(iter(refused.values()))
    where = first.split(" ", 1)[0]
    return (f"⚠ {where} is broken: agent {names} has a key that looks like a restriction but is none, so prompts are "
            "blocked until it is fixed (%agent config shows what is in force).")


def place_of(exc: ConfigError) -> str:
    """`opencode.yaml:5`: the file by its name and the line of the first problem."""
    from pathlib import Path

    name = Path(exc.path).name if exc.path else "the configuration"
    return f"{name}:{exc.line}" if exc.line is not None else name
