"""Formatters after an agent's edit, in OpenCode's shape: `formatter: {ruff: {command: [ruff, format, $FILE],
extensions: [.py]}}`. None runs unless configured.

Each formatter whose extensions match runs on the changed file, in the order configured, as a shell line
given to the caller's `Runner`: the tools run it as a shell command runs, in the OS sandbox of the call
(`tool/support/checks.py`). What it leaves is the file's new content: the diff the card shows and what the
turn's checkpoint records (so undo restores the file as it was before the edit, not before the formatting).
A formatter that fails or times out leaves the file as the edit wrote it, and the person is told.

`ruff` as a formatter's program is the `ruff` package's binary, which the sandbox's PATH may not hold.
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..config.schema import FormatterConfig
from .ruff import ruff_binary


@dataclass(frozen=True)
class FormatterRun:
    """How one formatter's command ended."""

    failed: str | None = None
    """Why it did not format (exit code, timeout), for the person; None when it did."""
    sandbox_note: str | None = None
    """The once-per-session word that commands run unconfined, when this run was the one to carry it."""


Runner = Callable[[str], Awaitable[FormatterRun]]
"""Runs a shell line to its end (bounded in time); never raises for the command's own failure."""


@dataclass
class Formatted:
    """What the formatters did to one file."""

    ran: list[str] = field(default_factory=list)
    """The formatters that ran and succeeded, by name."""
    notes: list[str] = field(default_factory=list)
    """Why one did not, for the person."""
    sandbox_note: str | None = None
    """See `FormatterRun.sandbox_note`: the card shows it as a shell command's."""


def matching(formatters: Mapping[str, FormatterConfig], path: Path) -> list[tuple[str, FormatterConfig]]:
    """The formatters configured for `path`'s kind of file, in the order configured."""
    name = path.name
    return [(n, f) for n, f in formatters.items()
            if not f.disabled and f.command and any(name.endswith(e) for e in f.extensions)]


def command_line(formatter: FormatterConfig, path: Path) -> str:
    """The shell line that runs `formatter` on `path`: `$FILE` replaced, its environment set before it."""
    assert formatter.command
    argv = [part.replace("$FILE", str(path)) for part in formatter.command]
    if argv[0] == "ruff":
        argv[0] = ruff_binary() or "ruff"
    env = [f"{name}={shlex.quote(value)}" for name, value in formatter.environment.items()]
    return " ".join([*env, shlex.join(argv)])


async def run_formatters(formatters: Mapping[str, FormatterConfig], path: Path, run: Runner) -> Formatted:
    """Run every formatter configured for `path` on it, one after the other."""
    done = Formatted()
    for name, formatter in matching(formatters, path):
        ended = await run(command_line(formatter, path))
        done.sandbox_note = done.sandbox_note or ended.sandbox_note
        if ended.failed:
            done.notes.append(f"formatter {name} {ended.failed}")
        else:
            done.ran.append(name)
    return done
