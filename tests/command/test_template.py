import pytest

from opencode_nb.command import parse_slash, render_template


def test_arguments_replaces_the_whole_argument_string_as_typed():
    assert render_template("Review $ARGUMENTS carefully", 'src/a.py "the loader"') == (
        'Review src/a.py "the loader" carefully')


def test_positionals_split_shell_style_and_quoted_strings_stay_whole():
    assert render_template("Move $1 to $2.", '"my notebook.ipynb" archive/') == "Move my notebook.ipynb to archive/."


def test_a_pasted_image_placeholder_is_one_argument():
    assert render_template("Compare $1 with $2 and $3", "[Image 1] [Image 2] closely") == (
        "Compare [Image 1] with [Image 2] and closely")
    assert render_template("Describe $1. Focus: $2", '"the chart in [Image 1]" axes') == (
        "Describe the chart in [Image 1]. Focus: axes")
    assert render_template("$1|$2", "[Image  12] x") == "[Image  12]|x"


def test_the_highest_numbered_placeholder_takes_the_rest():
    assert render_template("Fix $1: $2", "bug the mean is wrong") == "Fix bug: the mean is wrong"


def test_missing_positionals_become_empty():
    assert render_template("A=$1 B=$2 C=$3", "x") == "A=x B= C="


def test_a_template_without_placeholders_gets_the_arguments_appended():
    assert render_template("Summarize the project.", "focus on tests") == "Summarize the project.\n\nfocus on tests"
    assert render_template("Summarize the project.", "   ") == "Summarize the project."


def test_unbalanced_quotes_still_split():
    assert render_template("$1|$2", 'one "two') == 'one|"two'


def test_dollar_signs_in_arguments_are_taken_literally():
    assert render_template("Echo $ARGUMENTS", "costs $5 & $$") == "Echo costs $5 & $$"


@pytest.mark.parametrize(("text", "parsed"), [
    ("/review HEAD~1", ("review", "HEAD~1")),
    ("  /init", ("init", "")),
    ("/team/test a\nb", ("team/test", "a\nb")),
    ("not a /command", None),
])
def test_a_slash_at_the_start_of_a_prompt_is_a_command(text, parsed):
    assert parse_slash(text) == parsed
