"""Tab completion in `%%agent` cells and `%agent` lines: subcommands and their words, and `@` mentions.

A subcommand's words come from its declaration (`subcommands.TABLE`), the same table that decides whether a
line is a subcommand. What a mention can name is what the prompt understands: a subagent to run, a file to
attach, a variable whose description is attached. IPython splits words at `@`, so the completion replaces
what follows it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

MENTION_AT_CURSOR = re.compile(r"(?<![\w`@])@([\w~][\w./~-]*|)$")
LINE_MAGIC = re.compile(r"^\s*%agent ")
MAX_COMPLETIONS = 100


def subcommand_words(text_until_cursor: str) -> tuple[str, list[str]] | None:
    """On an `%agent` line: (the word being typed, the subcommands or subcommand words it may become)."""
    line = text_until_cursor.rsplit("\n", 1)[-1]
    start = LINE_MAGIC.match(line)
    if start is None:
        return None
    from .subcommands import TABLE

    return TABLE.complete(line[start.end():])


def mention_matcher(names: Callable[[], tuple[list[str], list[str], Path]]) -> Any:
    """An IPython context matcher of subcommand words and mentions; `names()` gives (subagents, variables, the
    directory files are under)."""
    from IPython.core.completer import SimpleCompletion, context_matcher

    @context_matcher()
    def complete_mentions(context: Any) -> dict[str, Any]:
        words = subcommand_words(context.text_until_cursor)
        if words is not None and words[1]:
            fragment, choices = words
            return {"completions": [SimpleCompletion(text=w, type="subcommand") for w in choices],
                    "matched_fragment": fragment, "suppress": True}
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
