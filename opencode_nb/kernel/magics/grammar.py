"""The `%agent` grammar: each subcommand declared once, and everything that reads or shows a line made from
those declarations.

A declaration says which words a subcommand takes (its shapes), how `%agent help` shows it, and the function
that answers it. Telling a subcommand from a prompt (`split`), the help text, tab completion and dispatch
all read the same declarations, so a new subcommand is one declaration and they cannot disagree about it.
A line that fits no shape is a prompt: `%agent stop the server` goes to the agent. A line that is plainly a
subcommand mistyped is refused rather than sent (prompts cost money and a session): a subcommand with no
arguments where it needs some, or an option after it that it does not take (`%agent sessions --al`); a first
word one slip from a subcommand whose other words fit it (`%agent sesions`); an unknown first word followed
by an option (`%agent bogus --x`). A prompt that happens to read like one goes in a `%%agent` cell.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from IPython.core.error import UsageError

if TYPE_CHECKING:
    from ..runner import NotebookAgent
    from .reconfig import ConfigWatch

Shown = Mapping[str, object] | Awaitable[Mapping[str, object]]
"""What a subcommand answers: a display bundle, or an awaitable one when it waits on the front end."""


class Magic(Protocol):
    """What a handler may use of the `%agent` magic (`agent.AgentMagics` is one): the handlers are declared
    below the magic that dispatches to them, so they name this instead of its class."""

    agent: NotebookAgent
    watch: ConfigWatch

    def display(self, bundle: Shown) -> None: ...

    def forget_if_empty(self) -> None: ...


Handler = Callable[[Magic, list[str]], Shown]
Runner = Callable[[Magic, list[str]], Awaitable[None]]

HELP_COLUMN = 25
"""Where the explanations in `%agent help` start; a longer usage stands on a line of its own."""

CLOSE = 0.8
"""How alike (difflib's ratio) a first word and a subcommand must be for the word to read as that subcommand
mistyped: `sesions`, `model`, `plans` are; `configure`, `step`, `todo` (prompts that start a sentence) are not."""

OPTION = re.compile(r"^--?[A-Za-z]")
"""A word that reads as a command-line option (`--all`, `-n`), not as prose."""

AS_PROMPT = "To send this line to the agent as a prompt, put it in a %%agent cell (the prompt on the lines below)."


def _any_word(word: str) -> bool:
    return True


@dataclass(frozen=True)
class Slot:
    """A word the person chooses (an id, a number), as opposed to a literal word of the subcommand.

    `accepts` says which words fit, `choices` are what completion offers for it.
    """

    name: str
    accepts: Callable[[str], bool] = _any_word
    choices: tuple[str, ...] = ()


Shape = tuple[str | Slot, ...]


def _matches(token: str | Slot, word: str) -> bool:
    return token.accepts(word) if isinstance(token, Slot) else token == word


@dataclass(frozen=True)
class Subcommand:
    """One `%agent` subcommand: its name, the argument shapes it takes, its help lines and its handler.

    `help` holds (usage after `%agent `, explanation) pairs; an explanation's further lines are separated by
    newlines. `quiet` subcommands need no configuration (help and stop work even when it is broken) or read
    it themselves. `check` may refuse a line that is clearly meant as this subcommand but malformed (rather
    than let it become a prompt). Lines whose first argument is in `runs` run rather than show: `run`
    answers them, awaited like a prompt. An `agent_run` subcommand runs on every line (`fix`, `explain`):
    each one starts an agent run.
    """

    name: str
    handler: Handler
    shapes: tuple[Shape, ...] = ((),)
    help: tuple[tuple[str, str], ...] = ()
    quiet: bool = False
    check: Callable[[list[str]], None] | None = None
    runs: tuple[str, ...] = ()
    run: Runner | None = None
    agent_run: bool = False

    def fits(self, args: list[str]) -> bool:
        return any(len(shape) == len(args) and all(map(_matches, shape, args)) for shape in self.shapes)

    def usage(self) -> str:
        """How it is written, from its help lines (declared without help, as `tools` is: its name)."""
        return " or ".join([f"%agent {usage}" for usage, _ in self.help] or [f"%agent {self.name}"])

    def awaited(self, args: list[str]) -> bool:
        """These arguments run (a plan's steps) rather than show, so the line is awaited like a prompt."""
        return self.run is not None and (self.agent_run or (bool(args) and args[0] in self.runs))

    def starts_run(self, args: list[str]) -> bool:
        """These arguments start an agent run (`plan run`, every `fix`), whose refusal says a mistake that blocks
        runs."""
        return self.agent_run or args[:1] == ["run"]

    def completions(self, typed: list[str], prefix: str) -> list[str]:
        """The words that may follow `typed` (the arguments so far) and start with `prefix`."""
        found: list[str] = []
        for shape in self.shapes:
            if len(shape) <= len(typed) or not all(map(_matches, shape, typed)):
                continue
            token = shape[len(typed)]
            for word in token.choices if isinstance(token, Slot) else (token,):
                if word.startswith(prefix) and word not in found:
                    found.append(word)
        return found


def help_lines(usage: str, text: str) -> str:
    """One entry of `%agent help`: the usage, then its explanation from `HELP_COLUMN` on."""
    head = f"%agent {usage}"
    indent = " " * HELP_COLUMN
    first, *rest = text.split("\n")
    lines = [head.ljust(HELP_COLUMN) + first] if len(head) <= HELP_COLUMN - 2 else [head, indent + first]
    return "\n".join([*lines, *(indent + line for line in rest)])


@dataclass
class Grammar:
    """The table of subcommands, in the order `%agent help` lists them, between `prelude` and `epilogue`."""

    prelude: str = ""
    epilogue: str = ""
    subcommands: dict[str, Subcommand] = field(default_factory=dict)

    def add(self, subcommand: Subcommand) -> Subcommand:
        if subcommand.name in self.subcommands:
            raise ValueError(f"%agent {subcommand.name} is declared twice")
        self.subcommands[subcommand.name] = subcommand
        return subcommand

    def declare(self, name: str, *, shapes: tuple[Shape, ...] = ((),), help: tuple[tuple[str, str], ...] = (),
                quiet: bool = False, check: Callable[[list[str]], None] | None = None, runs: tuple[str, ...] = (),
                run: Runner | None = None, agent_run: bool = False) -> Callable[[Handler], Handler]:
        """Declare the decorated function as the handler of subcommand `name` (the keywords: see `Subcommand`)."""

        def register(handler: Handler) -> Handler:
            self.add(Subcommand(name, handler, shapes=shapes, help=help, quiet=quiet, check=check, runs=runs,
                                run=run, agent_run=agent_run))
            return handler

        return register

    def __getitem__(self, name: str) -> Subcommand:
        return self.subcommands[name]

    def __iter__(self) -> Iterator[Subcommand]:
        return iter(self.subcommands.values())

    def help(self) -> str:
        entries = "\n".join(help_lines(usage, text) for sub in self for usage, text in sub.help)
        return "\n\n".join(part for part in (self.prelude, entries, self.epilogue) if part)

    def split(self, line: str) -> tuple[str | None, list[str]]:
        """A subcommand and its arguments, or (None, []) when the line is a prompt; a bare `%agent` is help.

        Raises:
            UsageError: the line is a subcommand mistyped (see the module docstring), with the usage meant.
        """
        words = line.split()
        if not words:
            return "help", []
        first, args = words[0], words[1:]
        sub = self.subcommands.get(first)
        if sub is None:
            self._refuse_lookalike(first, args)
            return None, []
        if sub.check is not None:
            sub.check(args)
        if sub.fits(args):
            return sub.name, args
        if not args or OPTION.match(args[0]):
            taken = f"does not take {' '.join(args)}" if args else "needs more"
            raise UsageError(f"%agent {first} {taken}: use {sub.usage()}. {AS_PROMPT}")
        return None, []

    def _refuse_lookalike(self, first: str, args: list[str]) -> None:
        """Raise for a first word that is not a subcommand but reads as one mistyped (or one unknown, given
        options); return for a prompt."""
        if OPTION.match(first):
            return  # the prompt's own options (`--model M`): `parse_options` checks them
        meant = difflib.get_close_matches(first, list(self.subcommands), n=1, cutoff=CLOSE)
        option_next = bool(args) and OPTION.match(args[0]) is not None
        if meant and (self.subcommands[meant[0]].fits(args) or option_next):
            shown = " ".join(["%agent", meant[0], *args])
            raise UsageError(f"%agent: {first} is not a subcommand; did you mean {shown}? {AS_PROMPT}")
        if option_next:
            raise UsageError(f"%agent: {first} is not a subcommand (%agent help lists them), and {args[0]} is not "
                             f"an option of a prompt. {AS_PROMPT}")

    def complete(self, line: str) -> tuple[str, list[str]]:
        """What follows `%agent ` up to the cursor → (the word being typed, the words it may become)."""
        *before, prefix = line.split(" ")
        typed = [word for word in before if word]
        if not typed:
            return prefix, [sub.name for sub in self if sub.name.startswith(prefix)]
        sub = self.subcommands.get(typed[0])
        return prefix, [] if sub is None else sub.completions(typed[1:], prefix)
