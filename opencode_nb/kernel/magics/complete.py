"""Tab completion of `@` mentions in `%%agent` cells and `%agent` lines: agents, files and variables.

What a mention can name is what the prompt understands: a subagent to run, a file to attach, a variable
whose description is attached. IPython splits words at `@`, so the completion replaces what follows it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

MENTION_AT_CURSOR = re.compile(r"(?<![\w`@])@([\w~][\w./~-]*|)$")
MAX_COMPLETIONS = 100


def mention_matcher(names: Callable[[], tuple[list[str], list[str], Path]]) -> Any:
    """An IPython context matcher; `names()` gives (subagents, variables, the directory files are under)."""
    from IPython.core.completer import SimpleCompletion, context_matcher

    @context_matcher()
    def complete_mentions(context: Any) -> dict[str, Any]:
        text = context.full_text
        line = context.line_with_cursor.lstrip()
        in_agent = text.lstrip().startswith("%%agent") or line.startswith("%agent ")
        match = MENTION_AT_CURSOR.search(context.text_until_cursor) if in_agent else None
        if match is None:
            return {"completions": [], "suppress": False}
        prefix = match.group(1)
        agents, variables, directory = names()
        found = [SimpleCompletion(text=n, type="agent") for n in agents if n.startswith(prefix)]
        found += [SimpleCompletion(text=n, type="variable") for n in variables if n.startswith(prefix)]
        found += [SimpleCompletion(text=f, type="path") for f in _files(directory, prefix)]
        return {"completions": found[:MAX_COMPLETIONS], "suppress": True}

    return complete_mentions


def _files(directory: Path, prefix: str) -> list[str]:
    folder, _, start = prefix.rpartition("/")
    base = (directory / folder) if folder else directory
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return []
    out = []
    for entry in entries:
        if entry.name.startswith(".") or not entry.name.startswith(start):
            continue
        name = f"{folder}/{entry.name}" if folder else entry.name
        out.append(name + ("/" if entry.is_dir() else ""))
        if len(out) >= MAX_COMPLETIONS:
            break
    return out
