"""A mistyped `%agent` line is said in its cell, not sent to the model as a prompt: a subcommand misspelt, an
option a subcommand or a prompt does not take. Ordinary one-line prompts still go to the agent, and a prompt
that reads like a subcommand goes in a `%%agent` cell."""

from __future__ import annotations

import json

import pytest
from IPython.core.error import UsageError

from opencode_nb.kernel.magics.agent import parse_options, split_prompt_line
from opencode_nb.kernel.magics.subcommands import split_line

HEADLESS = {"OPENCODE_NB_HEADLESS": "1"}


@pytest.mark.parametrize(("line", "meant"), [
    ("sesions", "did you mean %agent sessions?"),
    ("sesions --all", "did you mean %agent sessions --all?"),
    ("model", "did you mean %agent models?"),
    ("plans", "did you mean %agent plan?"),
    ("chekpoints", "did you mean %agent checkpoints?"),
])
def test_a_first_word_one_slip_from_a_subcommand_is_refused_with_the_subcommand_meant(line, meant):
    with pytest.raises(UsageError, match="not a subcommand") as refused:
        split_line(line)
    assert meant in str(refused.value) and "put it in a %%agent cell" in str(refused.value)


def test_an_unknown_word_followed_by_an_option_is_refused_and_says_how_to_send_it_as_a_prompt():
    with pytest.raises(UsageError) as refused:
        split_line("bogus --x")
    assert str(refused.value) == (
        "%agent: bogus is not a subcommand (%agent help lists them), and --x is not an option of a prompt. "
        "To send this line to the agent as a prompt, put it in a %%agent cell (the prompt on the lines below).")


@pytest.mark.parametrize(("line", "said"), [
    ("sessions --al", "%agent sessions does not take --al: use %agent sessions [--all]."),
    ("resume", "%agent resume needs more: use %agent resume ID."),
    ("new --bg fix it", "%agent new does not take --bg fix it: use %agent new."),
    ("diff --stat", "%agent diff does not take --stat: use %agent diff [N]."),
])
def test_a_subcommand_with_missing_words_or_an_option_it_does_not_take_shows_its_usage(line, said):
    with pytest.raises(UsageError, match="put it in a %%agent cell") as refused:
        split_line(line)
    assert str(refused.value).startswith(said)


@pytest.mark.parametrize("line", [
    "explain this dataframe", "stop the server please", "new features for the parser", "how does this work",
    "configure logging to write JSON", "fix the --model flag", "sesions are slow, why?", "todo: tidy the loader",
])
def test_ordinary_one_line_prompts_stay_prompts(line):
    assert split_line(line) == (None, [])
    assert split_prompt_line(line) == ("", line)


@pytest.mark.parametrize(("line", "said"), [
    ("--modle openai/gpt-5 fix it", "--modle is not an option of a prompt (they are --agent, --model, --session "
                                    "VALUE, --bg, --new); did you mean --model?"),
    ("--bogus fix it", "--bogus is not an option of a prompt"),
    ("--model", "--model needs a value before the prompt"),
    ("--plan p1 --step 2 do it", "a plan's step runs from a cell of its own"),
])
def test_a_one_line_prompt_that_starts_with_an_unknown_option_is_refused(line, said):
    with pytest.raises(UsageError, match="%agent: ") as refused:
        split_prompt_line(line)
    assert said in str(refused.value)


def test_an_option_written_with_an_equals_sign_is_an_option():
    assert split_prompt_line("--model=openai/gpt-5 --new fix it") == ("--model=openai/gpt-5 --new", "fix it")
    assert parse_options("--model=openai/gpt-5").model == "openai/gpt-5"


def test_a_misspelt_cell_option_gets_the_option_meant():
    with pytest.raises(UsageError, match=r"unknown option\(s\) --modle x \(did you mean --model\?\)"):
        parse_options("--modle x")


def test_in_a_kernel_mistyped_lines_fail_their_cell_and_never_reach_the_model(kernel):
    fe = kernel([{"text": "Answered the real prompt."}, {"text": "Sessions are listed by %agent sessions."}],
                render_views=False, env=HEADLESS)
    for line, said in (("%agent sesions", "did you mean %agent sessions?"),
                       ("%agent bogus --x", "bogus is not a subcommand"),
                       ("%agent sessions --al", "use %agent sessions [--all]")):
        msg = fe.execute(line)
        reply = fe.done(msg)
        assert reply["content"]["status"] == "error", line
        assert reply["content"]["ename"] == "UsageError" and said in reply["content"]["evalue"]
        assert "%%agent" in reply["content"]["evalue"]
    sessions = fe.text(fe.run_id("import json, opencode_nb.kernel as k; a = k.current()\n"
                                 "print(json.dumps([s.id for s in a.workspace().sessions.list()]))"))
    assert json.loads(sessions) == [], "no prompt was sent, so no session exists"
    prompt = fe.execute("%agent explain this dataframe")
    assert fe.done(prompt)["content"]["status"] == "ok"
    assert "Answered the real prompt." in fe.text(prompt)
    cell = fe.execute("%%agent\nsesions")
    assert fe.done(cell)["content"]["status"] == "ok", "in a %%agent cell the same words are a prompt"
