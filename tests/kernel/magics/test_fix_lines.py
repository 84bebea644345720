"""`%agent fix` and `%agent explain` lines: which are the subcommands (always awaited: each starts a run), which
stay prompts, and what their words mean."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from opencode_nb.kernel.fix.runs import FixRequest, parse_request
from opencode_nb.kernel.magics.subcommands import TABLE


@pytest.mark.parametrize("line", ["fix", "fix c1", "fix [5]", "fix 5", "explain 3f2a-11", "fix --agent plan",
                                  "fix c1 --model anthropic/claude-sonnet-4-6", "explain -m openai/gpt-5 -a build c9"])
def test_fix_and_explain_lines_are_subcommands_that_always_run(line: str):
    command, args = TABLE.split(line)
    assert command in ("fix", "explain") and TABLE[command].awaited(args) and TABLE[command].starts_run(args)


@pytest.mark.parametrize("line", ["fix it", "explain this error to me", "fix the join in the second cell"])
def test_prose_after_fix_or_explain_is_a_prompt(line: str):
    assert TABLE.split(line) == (None, [])


def test_an_unknown_option_is_refused_not_sent():
    with pytest.raises(UsageError, match="%agent fix does not take --bogus"):
        TABLE.split("fix --bogus")


def test_the_words_name_the_cell_the_agent_and_the_model_in_any_order():
    assert parse_request("fix", []) == FixRequest()
    assert parse_request("fix", ["--model", "m/x", "c1", "-a", "plan"]) == FixRequest("c1", "plan", "m/x")
    with pytest.raises(UsageError, match="takes one cell"):
        parse_request("explain", ["c1", "c2"])


def test_help_lists_both():
    help_text = TABLE.help()
    assert "%agent fix [CELL] [--agent A] [--model M]" in help_text and "%agent explain [CELL]" in help_text
