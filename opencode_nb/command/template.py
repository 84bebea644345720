"""Filling a command's template with the arguments typed after it.

- `$ARGUMENTS` becomes the whole argument string, exactly as typed.
- `$1`, `$2`, … become positional arguments, split shell-style (quoted strings stay whole, and so does
  `[Image 1]`, the placeholder a pasted image leaves in the text); the highest-numbered placeholder takes
  all the remaining arguments; missing ones become empty.
- A template with no placeholder gets non-empty arguments appended after a blank line.

Shell substitutions (`` !`cmd` ``) and `@file` references need permissions and files, so they are
expanded later, by the command runner, not here.
"""

from __future__ import annotations

import re
import shlex

POSITIONAL = re.compile(r"\$(\d+)")
IMAGE = re.compile(r"\[Image\s+\d+\]")
"""What a pasted image leaves in the typed text: one argument, though it holds a space."""
_STAND_IN = re.compile("\x00(\\d+)\x00")


def split_arguments(arguments: str) -> list[str]:
    """Shell-style words; an image placeholder stays one word, alone or inside a quoted string."""
    images: list[str] = []

    def stand_in(match: re.Match[str]) -> str:  # a word without spaces for the split; put back as typed after it
        images.append(match.group(0))
        return f"\x00{len(images) - 1}\x00"

    def put_back(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return images[n] if n < len(images) else match.group(0)

    protected = IMAGE.sub(stand_in, arguments)
    try:
        words = shlex.split(protected)
    except ValueError:  # an unbalanced quote: take the words as they are
        words = protected.split()
    return [_STAND_IN.sub(put_back, word) for word in words] if images else words


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
