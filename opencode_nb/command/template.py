"""Filling a command's template with the arguments typed after it.

- `$ARGUMENTS` becomes the whole argument string, exactly as typed.
- `$1`, `$2`, … become positional arguments, split shell-style (quoted strings stay whole); the
  highest-numbered placeholder takes all the remaining arguments; missing ones become empty.
- A template with no placeholder gets non-empty arguments appended after a blank line.

Shell substitutions (`` !`cmd` ``) and `@file` references need permissions and files, so they are
expanded later, by the command runner, not here.
"""

from __future__ import annotations

import re
import shlex

POSITIONAL = re.compile(r"\$(\d+)")


def split_arguments(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unbalanced quote: take the words as they are
        return arguments.split()


def render_template(template: str, arguments: str) -> str:
    args = split_arguments(arguments)
    numbers = [int(n) for n in POSITIONAL.findall(template)]
    last = max(numbers, default=0)

    def positional(match: re.Match[str]) -> str:
        n = int(match.group(1))
        if n == 0:
            return match.group(0)
        if n == last:
            return " ".join(args[n - 1:])
        return args[n - 1] if n <= len(args) else ""

    text = POSITIONAL.sub(positional, template)
    has_arguments = "$ARGUMENTS" in template
    text = text.replace("$ARGUMENTS", arguments)
    if not numbers and not has_arguments and arguments.strip():
        text = f"{text.rstrip()}\n\n{arguments.strip()}"
    return text.strip()
