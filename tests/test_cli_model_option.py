"""`opencode-nb demo --model` is checked before the demo starts, and its error names the option, not a file."""

from __future__ import annotations

import pytest

from opencode_nb.cli import main


@pytest.mark.parametrize(("model", "said"), [
    ("gpt-5", "opencode-nb demo: --model: 'gpt-5' is not a model id (provider/model): did you mean openai/gpt-5?"),
    ("anthropic/claude-sonet-4-6", "opencode-nb demo: --model: 'anthropic/claude-sonet-4-6' is not a model the "
                                   "catalog knows: did you mean anthropic/claude-sonnet-4-6?"),
])
def test_a_bad_model_option_stops_the_demo_before_it_starts_and_names_the_option(model, said, capsys):
    assert main(["demo", "--model", model]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(said) and "config" not in err.split("(To use")[0]
    assert "sample project" not in out, "nothing ran"
