"""What a program that runs another command runs, and the common shape of such programs: options, then the
command (`nice -n 5 rm x`, `setpriv --reuid=1 rm x`).

`Inner` is what the checks receive: the commands run, the shell text run, and why anything else cannot be
seen (`hidden`) or known (`unknown`). `Prefix` reads a program of the common shape with its option table
(`program_options.py`), so that `--sig` is `--signal` and an option the table lacks is not trusted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .options import OptionSpec, Scan, scan
from .program_options import PROGRAM_OPTIONS
from .words import Word


@dataclass
class Inner:
    commands: list[list[Word]] = field(default_factory=list)
    """Commands run directly, as words (`sudo rm x` → `rm x`)."""
    scripts: list[Word] = field(default_factory=list)
    """Shell text run by a shell (`bash -c 'rm x'` → `rm x`); a value of None is text known only at run time."""
    hidden: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Prefix:
    """A program that runs the command following its options (and `operands` words of its own)."""

    spec: OptionSpec = field(default_factory=OptionSpec)
    operands: int = 0
    assignments: bool = False
    """`NAME=value` words may come before the command (sudo, env)."""
    no_command: frozenset[str] = frozenset()
    """Options after which nothing is run (`command -v`, `taskset -p`)."""
    bare: str = ""
    """What runs when no command is given (`nsenter -t 1` starts a shell reading its input): hidden code."""

    def __call__(self, words: list[Word]) -> Inner:
        name = words[0].shown.rsplit("/", 1)[-1]
        found = scan(words, 1, self.spec)
        if found is None:
            return Inner(unknown=[f"an option of `{name}` is only known when the line runs, so the command it "
                                  "runs cannot be made out"])
        if self.no_command and found.has(*self.no_command):
            return Inner()
        inner = command_at(name, words, found.operand + self.operands, self.assignments)
        if self.bare and not inner.commands and not inner.unknown:
            inner.hidden.append(f"`{name}` without a command runs {self.bare}")
        return doubted(name, words, found, inner, self.spec, self.operands, self.assignments)


def doubted(name: str, words: list[Word], found: Scan, inner: Inner, spec: OptionSpec | None = None,
             operands: int = 0, assignments: bool = False) -> Inner:
    """Options the program's table does not know make the command after them uncertain: a person is asked.
    Given the spec, the command that would run were the last of them to take the next word is checked too."""
    for i in found.doubtful:
        inner.unknown.append(f"`{words[i].shown}` is not an option of `{name}` known here: it may take the word "
                             f"after it as its value, so what `{name}` runs cannot be made out")
    again = scan(words, found.doubtful[-1] + 2, spec) if spec is not None and found.doubtful else None
    if again is not None:
        inner.commands += command_at(name, words, again.operand + operands, assignments).commands
    return inner


def options_of(program: str) -> OptionSpec:
    return PROGRAM_OPTIONS[program]


def command_at(name: str, words: list[Word], index: int, assignments: bool = False) -> Inner:
    while assignments and index < len(words) and is_assignment(words[index]):
        index += 1
    if index >= len(words):
        return Inner()
    if words[index].value is None and index > 0 and words[index].text.startswith("-"):
        return Inner(unknown=[f"cannot tell what `{name}` runs"])
    return Inner(commands=[words[index:]])


def is_assignment(word: Word) -> bool:
    """`NAME=value` before the command of `env` or `sudo`: any word with `=` that is not an option (env
    takes `BASH_FUNC_ls%%=() {...}` too, which bash imports as a function)."""
    text = word.value if word.value is not None else word.text
    head, eq, _ = text.partition("=")
    return bool(eq) and bool(head) and not head.startswith("-")


def assignments_of(words: list[Word], start: int = 1) -> list[tuple[str, Word]]:
    """The `NAME=value` words a wrapper (env, sudo) passes to the command's environment."""
    out = []
    for word in words[start:]:
        if is_assignment(word):
            text = word.value if word.value is not None else word.text
            out.append((text.split("=", 1)[0], word))
    return out
