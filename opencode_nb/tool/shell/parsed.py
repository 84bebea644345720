"""What the reading of a bash line gives: the permission patterns, the commands as the shell will run them,
their redirections, and what makes the line untrustworthy (unknown programs, code no rule can see).

Its own module so that the checks reading a parse (paths, hidden code, the bash tool) depend on these values,
not on the tree walk in `parse.py` that produces them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .command_word import program
from .variables import Variables
from .words import Word


@dataclass(frozen=True)
class Hidden:
    """A call that runs code no rule can see."""

    pattern: str
    """Checked against the rules like any other; starts with `program`."""
    program: str
    reason: str


@dataclass
class SimpleCommand:
    """One command as the shell will run it."""

    words: list[Word]
    """Its words after quote removal and brace expansion (unknown ones have no value)."""
    variables: Variables = field(default_factory=Variables)
    """What the variables of its line can hold, to work out paths built from them."""

    @property
    def name(self) -> str:
        """The program it runs, by name; "" when that is only known when the line runs."""
        return program(self.words[0]) or "" if self.words else ""


@dataclass(frozen=True)
class Redirect:
    before: int
    """How many commands the shell meets before it (to know which `cd`s apply)."""
    target: Word
    writes: bool
    variables: Variables = field(default_factory=Variables)


@dataclass
class ParsedCommand:
    patterns: list[str] = field(default_factory=list)
    """What the `bash` permission is checked against, in order, no repeats."""
    always: list[str] = field(default_factory=list)
    """The prefixes an "always" reply grants (`git checkout *`)."""
    commands: list[SimpleCommand] = field(default_factory=list)
    """Every simple command written in the line, `cd`s included, in the order the shell meets them."""
    redirects: list[Redirect] = field(default_factory=list)
    parsed: bool = True
    """False when the line cannot be trusted to mean what its patterns say: ask a person regardless."""
    reason: str | None = None
    unknown: list[str] = field(default_factory=list)
    """Why which program runs cannot be known: ask a person regardless."""
    hidden: list[Hidden] = field(default_factory=list)
    """Calls running code no rule sees: ask a person unless a rule naming the program allows them."""

    def add_pattern(self, pattern: str | None) -> None:
        if pattern and pattern not in self.patterns:
            self.patterns.append(pattern)

    def add_always(self, prefix: str) -> None:
        if prefix not in self.always:
            self.always.append(prefix)

    def add_unknown(self, reason: str) -> None:
        if reason not in self.unknown:
            self.unknown.append(reason)

    def add_hidden(self, pattern: str, name: str, reason: str) -> None:
        self.add_pattern(pattern)
        entry = Hidden(pattern, name, reason)
        if entry not in self.hidden:
            self.hidden.append(entry)
