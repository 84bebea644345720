"""Checkpoints as a person reads them in a terminal or a cell: one line per turn, with what it changed."""

from __future__ import annotations

from datetime import datetime

from .records import TurnRecord, not_recorded

_PROMPT_WIDTH = 48


def format_turns(turns: list[TurnRecord], *, available: bool = True, why_not: str | None = None) -> str:
    """`  3  14:02  "fix the mean"  src/stats.py (+1 -1), out.csv (new)`, taken-back turns marked `undone`."""
    if not turns:
        lines = ["no turns yet in this session"]
    else:
        lines = []
        for turn in turns:
            prompt = " ".join(turn.prompt.split())
            prompt = prompt if len(prompt) <= _PROMPT_WIDTH else prompt[:_PROMPT_WIDTH - 1] + "…"
            files = ", ".join(f.label() for f in turn.files) or "no file changes"
            if turn.skipped:
                files += f"; not recorded: {not_recorded(turn.skipped)}"
            mark = " (undone)" if turn.undone else ""
            lines.append(f"{turn.index:>3}  {datetime.fromtimestamp(turn.created):%H:%M}  {prompt!r}{mark}  {files}")
    if not available and why_not:
        lines.append(f"note: {why_not}")
    return "\n".join(lines)
