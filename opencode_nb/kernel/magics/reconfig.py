"""Keeping the notebook's workspace in step with its configuration files, and saying what it found.

Before each `%agent` cell the files are compared with what the workspace read (a few `stat` calls). A
change is read again at once, so editing `opencode.yaml` needs no `%agent reload`. A changed file that has
problems does not throw away a configuration that works: the notebook keeps the previous one, says so
once per change with every problem in it, and reads the files again at the next cell after they change.
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
        """The files as they were when they were last found wrong: said once, until they change again."""
        self._asked: str | None = None
        """The held change whose prompt was shown: shown once per change."""
        self._reread = False
        """The person accepted a held change from its prompt: read the files again at the next cell."""
        self.kept = False
        """As of the latest `refresh`: the files changed and were found wrong, so the workspace in use is the
        one read before them."""

    def refresh(self) -> list[str]:
        """Read the configuration again if its files changed; the lines the person should read now.

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
                self._refused = stamp
                notes.append(kept_message(exc))
            else:
                self._refused = None
                changed = sorted({path for path, *_ in set(stamp) ^ set(ws.loaded.stamp)})
                ws = self.reload(checked=True)
                if ws.config_held is None:  # else its prompt says what happened
                    notes.append(f"Configuration read again: {', '.join(changed)} changed." if changed else
                                 "Configuration read again: the change you applied is in force.")
        self.kept = stamp == self._refused
        return notes + self.warnings(ws)

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

                self._refused = previous.loaded.on_disk()
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
    return (f"The configuration files changed but cannot be used, so this notebook keeps the configuration it "
            f"read before:\n{exc}\nFix the file; it is read again at the next %agent cell.")
