"""The `%agent` subcommand table as a specification: every declared subcommand is in the help, parses,
completes and dispatches to its handler, and one more declaration is all a new subcommand needs."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from IPython.core.completer import CompletionContext

from opencode_nb.kernel.magics import subcommands
from opencode_nb.kernel.magics.agent import AgentMagics
from opencode_nb.kernel.magics.complete import mention_matcher
from opencode_nb.kernel.magics.grammar import Grammar, Slot, Subcommand
from opencode_nb.kernel.magics.subcommands import HELP, TABLE, split_line

SAMPLES = ("2", "fix-1a2b", "x")


def line_for(shape: tuple[str | Slot, ...]) -> list[str]:
    """A line that fits `shape`: its literal words, and for each slot a word the slot accepts."""
    return [token if isinstance(token, str) else next(w for w in (*token.choices, *SAMPLES) if token.accepts(w))
            for token in shape]


EVERY_FORM = [(sub.name, line_for(shape)) for sub in TABLE for shape in sub.shapes]


def bare_magics(display: list[Any]) -> AgentMagics:
    """The magic's own reading of a line, without a kernel: notices cost nothing, output is collected."""
    magics = AgentMagics.__new__(AgentMagics)
    magics.display = display.append
    magics.notices = lambda **_: None  # type: ignore[method-assign]  # no configuration to watch here
    return magics


def completions(line: str) -> list[str]:
    matcher = mention_matcher(lambda: (["explore"], ["df"], Path("/nonexistent")))
    context = CompletionContext(full_text=line, cursor_position=len(line), cursor_line=0,
                                token=line.rsplit(" ", 1)[-1], limit=None)
    return [c.text for c in matcher(context)["completions"]]


def test_the_table_holds_every_subcommand_and_the_help_is_made_from_it():
    assert [sub.name for sub in TABLE] == [
        "sessions", "resume", "show", "new", "agents", "skills", "mcp", "hooks", "tool", "tools", "models",
        "permissions", "stop", "config", "undo", "redo", "accept", "reject", "pending", "checkpoints", "diff", "plan",
        "fix", "explain", "reload", "help"]
    assert TABLE.help() == HELP
    assert HELP.index("%agent sessions [--all]") < HELP.index("%agent plan cells [ID]") < HELP.index("%agent help")


@pytest.mark.parametrize("name", [sub.name for sub in TABLE])
def test_every_subcommand_is_in_the_help(name):
    assert f"%agent {name}" in HELP


@pytest.mark.parametrize(("name", "args"), EVERY_FORM, ids=[" ".join([n, *a]) for n, a in EVERY_FORM])
def test_every_form_of_every_subcommand_parses_and_completes(name, args):
    assert split_line(" ".join([name, *args])) == (name, args)
    assert name in TABLE.complete(name[:2])[1]
    assert name in completions(f"%agent {name[:2]}")
    for at, word in enumerate(args):
        token = next(shape[at] for shape in TABLE[name].shapes if line_for(shape) == args)
        if isinstance(token, str):  # a literal word is offered once the words before it are typed
            assert word in completions(" ".join(["%agent", name, *args[:at], word[:1]]))


@pytest.mark.parametrize(("name", "args"), EVERY_FORM, ids=[" ".join([n, *a]) for n, a in EVERY_FORM])
def test_every_form_dispatches_to_its_declared_handler(name, args, monkeypatch):
    called: list[tuple[str, list[str]]] = []

    def handler(magics: Any, got: list[str]) -> dict[str, str]:
        called.append(("show", got))
        return {"text/plain": f"answer of {name}"}

    async def run(magics: Any, got: list[str]) -> None:
        called.append(("run", got))

    table = Grammar(TABLE.prelude, TABLE.epilogue, dict(TABLE.subcommands))
    table.subcommands[name] = dataclasses.replace(TABLE[name], handler=handler,
                                                  run=run if TABLE[name].run else None)
    monkeypatch.setattr(subcommands, "TABLE", table)
    shown: list[Any] = []
    magics = bare_magics(shown)
    awaited = magics.line(" ".join([name, *args]))
    if table[name].awaited(args):  # plan run / plan cells: the cell awaits them like a prompt
        assert awaited is not None and shown == []
        asyncio.run(magics.prompt(*awaited))
        assert called == [("run", args)]
    else:
        assert awaited is None and called == [("show", args)]
        assert shown == [{"text/plain": f"answer of {name}"}]


def test_a_new_subcommand_is_one_declaration(monkeypatch):
    table = Grammar(TABLE.prelude, TABLE.epilogue, dict(TABLE.subcommands))

    @table.declare("ping", shapes=((), (Slot("N", str.isdigit),)), help=(("ping [N]", "answer N times"),))
    def ping(magics: Any, args: list[str]) -> dict[str, str]:
        return {"text/plain": "pong" * int(args[0] if args else 1)}

    monkeypatch.setattr(subcommands, "TABLE", table)
    assert "%agent ping [N]".ljust(25) + "answer N times" in table.help()
    assert split_line("ping 3") == ("ping", ["3"]) and split_line("ping the server") == (None, [])
    assert completions("%agent pi") == ["ping"]
    shown: list[Any] = []
    assert bare_magics(shown).line("ping 2") is None and shown == [{"text/plain": "pongpong"}]
    assert bare_magics(shown).line("ping the server") == ("", "ping the server"), "it fits no shape: a prompt"
    shown.clear()
    bare_magics(shown).line("help")
    assert "%agent ping [N]" in shown[0]["text/plain"], "the help subcommand reads the table of the moment"
    with pytest.raises(ValueError, match="declared twice"):
        table.add(Subcommand("ping", ping))


def test_help_entries_line_up_and_a_long_usage_stands_on_its_own_line():
    lines = HELP.splitlines()
    assert "%agent resume ID         continue session ID from the next prompt" in lines
    at = lines.index("%agent config accept|keep")
    assert lines[at + 1].startswith(" " * 25 + "apply a configuration change")


def test_completion_offers_subcommands_their_words_and_leaves_prompts_to_mentions():
    assert completions("%agent s") == ["sessions", "show", "skills", "stop"]
    assert completions("%agent sessions --") == ["--all"]
    assert completions("%agent plan r") == ["run"]
    assert completions("%agent plan run --f") == ["--from"]
    assert completions("%agent config ") == ["accept", "keep"]
    assert completions("%agent tool ") == ["add", "remove", "list"]
    assert completions("%agent fix the @ex") == ["explore"], "a prompt's mentions still complete"
    assert completions("%agent stop ") == [] and completions("x = 1  # %agent s") == []


def test_a_malformed_plan_run_is_an_error_not_a_prompt():
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="--from takes a step number"):
        split_line("plan run --from soon")
    assert split_line("plan run the tests then deploy") == (None, [])
