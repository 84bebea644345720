"""`Diagnostics`: what runs after an agent changes Python, so the model reads its own mistakes at once.

After `write` or `edit` changes a file, the configured formatters run on it (none by default), then the
configured checkers (`ruff`, and pyright's language server where installed and listed) check what the file
now holds; after `notebook_edit` inserts or replaces a code cell, ruff checks the cell with the names the
kernel holds and the cells above it define. The error-level findings are appended to the tool's output, the
model's reading (`Outcome.for_model`), and summed up on the card (`Outcome.metadata`).

Nothing here fails an edit: a checker that is missing, slow or broken is named in the card's notes and the
edit's result goes on without its findings. Each checker is bounded by `diagnostics.timeout_s`.

This package knows nothing of tools: the tools hand it paths, text and a way to run a formatter's command
(`tool/support/checks.py`), so it sits below them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config.schema import DiagnosticsConfig, FormatterConfig
from .findings import Checked, Finding, merged
from .formatter import Formatted, Runner, matching, run_formatters
from .lsp import LanguageServer, find_server
from .ruff import RuffFailed, check_cell, check_source

PYTHON_FILES = (".py", ".pyi")
IPYTHON_NAMES = frozenset({"display", "get_ipython", "In", "Out", "exit", "quit"})
"""Names IPython gives every cell, whether or not they are in the namespace when the agent looks."""


@dataclass(frozen=True)
class Outcome:
    """What happened after one change: the content it left (formatted or not), and what the checks found."""

    content: str | None = None
    """The file's content after the formatters; None where no formatter changed anything."""
    formatted: Formatted = field(default_factory=Formatted)
    checked: Checked | None = None

    def for_model(self) -> str:
        """Appended to the tool's output: that a formatter changed the file (so the model reads it again before
        its next edit, whose old_string would not match any more), and the findings."""
        text = ""
        if self.content is not None:
            text += (f"\n\nThe file was then formatted ({', '.join(self.formatted.ran)}), which changed its text: "
                     "read it again before editing it.")
        return text + (self.checked.for_model() if self.checked is not None else "")

    def metadata(self) -> dict[str, Any]:
        """Merged into the tool result's metadata, for the card."""
        entries: dict[str, Any] = {}
        if self.checked is not None:
            entries["diagnostics"] = self.checked.metadata()
        if self.formatted.ran or self.formatted.notes:
            entries["formatted"] = {"ran": list(self.formatted.ran), "notes": list(self.formatted.notes)}
        if self.formatted.sandbox_note:
            entries["sandbox_note"] = self.formatted.sandbox_note
        return entries


NOTHING = Outcome()


class Diagnostics:
    """The workspace's formatters and checkers; one language server per project, started at its first check.

    Args:
        config: `diagnostics:` of the configuration.
        formatters: `formatter:` of the configuration.
        servers: finds the installed language server (name, argv), for tests to point elsewhere.
    """

    def __init__(self, config: DiagnosticsConfig | None = None,
                 formatters: Mapping[str, FormatterConfig] | None = None, *,
                 servers: Callable[[], tuple[str, list[str]] | None] = find_server) -> None:
        self.config = config or DiagnosticsConfig()
        self.formatters = dict(formatters or {})
        self._find_server = servers
        self._servers: dict[Path, LanguageServer] = {}
        self._no_server_said = False

    def reconfigure(self, config: DiagnosticsConfig, formatters: Mapping[str, FormatterConfig]) -> None:
        """Follow a configuration read again; running language servers stay (a checker taken off the list is
        simply not asked)."""
        self.config, self.formatters = config, dict(formatters)

    def formats(self, path: Path) -> bool:
        """Whether a formatter is configured for `path`."""
        return bool(matching(self.formatters, path))

    async def after_file_change(self, path: Path, content: str, where: str, *, root: Path,
                                run: Runner | None = None) -> Outcome:
        """Format `path` (just written with `content`) with `run`, then check what it holds; `where` names it
        as the model reads it, `root` is the project's (where the checkers run and find its settings)."""
        formatted = Formatted()
        new: str | None = None
        if run is not None and self.formats(path):
            formatted = await run_formatters(self.formatters, path, run)
            if formatted.ran:
                try:
                    now = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    formatted.notes.append(f"the formatted file could not be read back: {exc}")
                else:
                    if now != content:
                        new = content = now
        checked = None
        if self.config.enabled and path.suffix in PYTHON_FILES:
            checked = await self.check_file(path, content, where, root)
        return Outcome(new, formatted, checked)

    async def check_file(self, path: Path, content: str, where: str, root: Path) -> Checked:
        """Every configured checker's findings in `content`, the new text of `path`, merged."""
        groups: list[list[Finding]] = []
        ran: list[str] = []
        notes: list[str] = []
        timeout = self.config.timeout_s
        for checker in dict.fromkeys(self.config.python):
            if checker == "ruff":
                try:
                    groups.append(await check_source(content, path, cwd=root, timeout_s=timeout))
                    ran.append("ruff")
                except (RuffFailed, OSError) as exc:
                    notes.append(str(exc))
            else:
                server = self._server(root, notes)
                if server is None:
                    continue
                try:
                    found = await server.check(path, content, timeout)
                except (OSError, ConnectionError) as exc:
                    server.close()
                    notes.append(f"{server.name} stopped: {exc}")
                    continue
                if found is None:
                    notes.append(f"{server.name} did not answer within {timeout:g} s (it may still be starting)")
                else:
                    groups.append(found)
                    ran.append(server.name)
        return Checked(where, merged(groups), ran, notes, cap=self.config.max_per_file)

    @property
    def checks_cells(self) -> bool:
        """Whether code cells are checked (ruff is on)."""
        return self.config.enabled and "ruff" in self.config.python

    async def after_cell_change(self, source: str, above: Sequence[str], where: str, *, notebook: Path,
                                root: Path, known: Iterable[str] = ()) -> Outcome:
        """Check a code cell's new `source`, below the code cells `above`, knowing the kernel's names `known`;
        `notebook` is where ruff looks for the project's settings."""
        if not self.checks_cells:
            return NOTHING
        try:
            found = await check_cell(source, above, notebook, cwd=root, timeout_s=self.config.timeout_s,
                                     known={*IPYTHON_NAMES, *known})
        except (RuffFailed, OSError) as exc:
            return Outcome(checked=Checked(where, notes=[str(exc)], cap=self.config.max_per_file))
        return Outcome(checked=Checked(where, merged([found]), ["ruff"], cap=self.config.max_per_file))

    def _server(self, root: Path, notes: list[str]) -> LanguageServer | None:
        server = self._servers.get(root)
        if server is not None:
            return server
        found = self._find_server()
        if found is None:
            if not self._no_server_said:
                notes.append("pyright is listed in diagnostics.python but neither pyright nor basedpyright is "
                             "installed")
                self._no_server_said = True
            return None
        server = self._servers[root] = LanguageServer(found[0], found[1], root)
        return server

    def close(self) -> None:
        """Stop the language servers (the workspace closes); `aclose` also waits until they are gone."""
        for server in self._servers.values():
            server.close()
        self._servers.clear()

    async def aclose(self) -> None:
        servers, self._servers = list(self._servers.values()), {}
        await asyncio.gather(*(server.aclose() for server in servers))
