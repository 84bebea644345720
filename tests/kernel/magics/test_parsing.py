"""What a cell means: the transformer, subcommands versus prompts, options, and {var} interpolation."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from opencode_nb.kernel.magics.agent import parse_options, split_prompt_line
from opencode_nb.kernel.magics.interpolate import InterpolationError, interpolate
from opencode_nb.kernel.magics.subcommands import split_line
from opencode_nb.kernel.magics.transform import transform


def test_an_agent_cell_becomes_one_awaited_call_with_its_body_intact():
    lines = ["%%agent --agent plan\n", "Look at {df} and 'quote' \"this\"\n", "second line\n"]
    [code] = transform(lines)
    assert code.startswith("await __import__('opencode_nb.kernel'")
    assert "'--agent plan'" in code and repr("Look at {df} and 'quote' \"this\"\nsecond line\n") in code


def test_top_level_agent_lines_are_awaited_and_nested_ones_left_to_the_magic():
    lines = ["x = 1\n", "%agent sessions\n", "for i in range(2):\n", "    %agent hi\n"]
    out = transform(lines)
    assert out[0] == "x = 1\n" and "run_line('sessions')" in out[1] and out[3] == "    %agent hi\n"


def test_other_cells_and_lookalikes_are_untouched():
    assert transform(["%agentish\n"]) == ["%agentish\n"]
    assert transform(["%%agent?\n"]) == ["%%agent?\n"]
    assert transform(["print('%agent')\n"]) == ["print('%agent')\n"]


@pytest.mark.parametrize(("line", "expected"), [
    ("sessions", ("sessions", [])), ("sessions --all", ("sessions", ["--all"])),
    ("resume ses_1", ("resume", ["ses_1"])), ("stop", ("stop", [])), ("", ("help", [])),
    ("stop the server please", (None, [])), ("new features for the parser", (None, [])),
])
def test_a_line_is_a_subcommand_only_when_it_fits_one(line, expected):
    assert split_line(line) == expected


def test_a_subcommand_missing_its_words_is_an_error_not_a_prompt():
    with pytest.raises(UsageError, match="%agent resume needs more: use %agent resume ID"):
        split_line("resume")


def test_leading_options_of_a_one_line_prompt_are_split_off():
    assert split_prompt_line("--model openai/gpt-5 --new fix the --model flag") == (
        "--model openai/gpt-5 --new", "fix the --model flag")


def test_options_are_checked():
    options = parse_options("--agent plan --session ses_1 --bg")
    assert (options.agent, options.session, options.bg, options.new) == ("plan", "ses_1", True, False)
    with pytest.raises(UsageError, match="not allowed with"):
        parse_options("--session ses_1 --new")
    with pytest.raises(UsageError, match="unknown option"):
        parse_options("--temperature 3")


def test_variables_are_filled_in_and_double_braces_are_literal():
    ns = {"df": "DATA", "rows": [10, 20], "x": 3.14159}
    assert interpolate("see {df} {rows[1]} {x:.2f} {{df}}", ns) == "see DATA 20 3.14 {df}"


def test_code_braces_survive_and_an_unknown_name_is_an_error_that_says_how_to_escape():
    assert interpolate('d = {"a": 1}; f"{x + 1}"', {}) == 'd = {"a": 1}; f"{x + 1}"'
    with pytest.raises(InterpolationError, match=r"\{\{missing\}\}"):
        interpolate("look at {missing}", {})


def test_huge_values_are_cut_with_a_note():
    assert "more characters cut" in interpolate("{big}", {"big": "x" * 50_000})


def test_undo_redo_checkpoints_and_diff_are_subcommands_and_lookalike_prompts_stay_prompts():
    assert split_line("undo") == ("undo", [])
    assert split_line("undo run_1") == ("undo", ["run_1"])
    assert split_line("undo --to 2") == ("undo", ["--to", "2"])
    assert split_line("undo --to msg_01abc") == ("undo", ["--to", "msg_01abc"])
    assert split_line("redo") == ("redo", [])
    assert split_line("checkpoints") == ("checkpoints", [])
    assert split_line("diff") == ("diff", [])
    assert split_line("diff 3") == ("diff", ["3"])
    assert split_line("diff these two files") == (None, [])
    assert split_line("diff them") == (None, [])
    assert split_line("undo the last change") == (None, [])
    assert split_line("undo that") == ("undo", ["that"]), "one word after undo names a python run"
    assert split_line("redo it all") == (None, [])
