"""The shell commands in an ex command line: what `vim -c '!rm x'`, `vim '+r !rm x'` or `ex --cmd '%!rm x'` hands
to a shell, so the rules see it as they see the line itself.

An ex command line is commands separated by `|`, each with an optional range (`%`, `.,$`, `'a,'b`, `/pat/`,
numbers) and modifiers (`silent!`, `keepjumps`, `vertical`, ...) in front. Four of them give the rest of the
text to a shell: `!cmd` (with a range, `{range}!cmd` filters lines through it), `r !cmd` / `read!cmd` (reads
its output) and `w !cmd` (writes to its input; `w!` with no space only forces the write). The text after `!`
runs whole, `|` included, as vim passes it to the shell. `!!` repeats the previous shell command, which is
unknown here.

Everything else (`call system(...)`, `execute`, `terminal`, a Python or Lua line, `normal` keystrokes, `source`)
can also run a shell, and no reading of vimscript can tell: it is reported as hidden (`other`), so it asks
when only a catch-all allows it. What is taken for `!cmd` is read generously: a `|` inside a quoted string may
cut a command short and make a `!` seem to start one, which can only add a check, never lose one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_RANGE = re.compile(r"(?:\s|:|[%.$,;]|\d+|'[a-zA-Z<>\[\]]|\\[/?&]|/(?:[^/\\]|\\.)*/|\?(?:[^?\\]|\\.)*\?|[+-]\d*)*")
_MODIFIER = re.compile(r"(?:sil(?:e(?:n(?:t)?)?)?!?|uns(?:i(?:l(?:e(?:n(?:t)?)?)?)?)?|keep\w*|noa\w*|verb\w*|lockm\w*|"
                       r"hid\w*|tab\w*|vert\w*|hor\w*|to(?:p\w*)?|bo(?:t\w*)?|lefta\w*|abo\w*|rightb\w*|bel\w*|"
                       r"conf\w*|bro\w*|san\w*|filt\w*!?\s+(?:/(?:[^/\\]|\\.)*/|\S+)|nos\w*)(?=[\s!:]|$)\s*")
_READ_WRITE = re.compile(r"(?:r(?:e(?:a(?:d)?)?)?\s*|w(?:r(?:i(?:t(?:e)?)?)?)?\s+)!(?P<cmd>.*)\Z", re.S)


@dataclass
class ExShell:
    shell: list[str] = field(default_factory=list)
    """The shell text each `!` command runs, in order."""
    other: bool = False
    """Something else runs too, which may be code of any kind."""
    repeat: bool = False
    """`!!`: the previous shell command again, which only the run knows."""


def shell_commands(text: str) -> ExShell:
    """What the ex command line `text` gives to a shell (see the module docstring)."""
    found = ExShell()
    rest = text
    while rest:
        command = _bare(rest)
        if command.startswith("!"):
            if command.startswith("!!"):
                found.repeat = True
            found.shell.append(command[1:])
            return found
        match = _READ_WRITE.match(command)
        if match is not None:
            found.shell.append(match.group("cmd"))
            return found
        head, bar, rest = command.partition("|")
        if head.strip() and not _harmless(head.strip()):
            found.other = True
        if not bar:
            break
    return found


def _bare(command: str) -> str:
    """The command without its range and modifiers."""
    while True:
        start = command
        command = command[_RANGE.match(command).end():]  # type: ignore[union-attr]  # matches at least ""
        match = _MODIFIER.match(command)
        if match is not None and match.end() > 0:
            command = command[match.end():]
        if command == start:
            return command


_HARMLESS = re.compile(r"(?:q(?:u(?:i(?:t)?)?)?|qa(?:ll)?|wq|wqa(?:ll)?|xa(?:ll)?|x(?:it)?|w(?:r(?:i(?:t(?:e)?)?)?)?|"
                       r"wa(?:ll)?|up(?:date)?|cq(?:uit)?|e(?:d(?:i(?:t)?)?)?|\d+)!?(?:\s+[\w./-]+)?\Z")


def _harmless(command: str) -> bool:
    """Quitting, writing, editing by name, a line number: commands that run nothing."""
    return _HARMLESS.fullmatch(command) is not None
