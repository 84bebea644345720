"""In a notebook, a model id misspelt in opencode.yaml fails the first prompt cell with the file, the line and the
id meant, before anything runs; `%agent models` and `%agent config` still answer, and once the file is fixed
the next prompt runs."""

from __future__ import annotations

import pytest
import yaml

pytestmark = pytest.mark.timeout(90)
HEADLESS = {"OPENCODE_NB_HEADLESS": "1"}


def test_a_misspelt_model_in_the_file_stops_the_first_prompt_at_its_line_but_not_the_listings(kernel, tmp_path):
    fe = kernel([{"text": "Ran with the model meant."}], render_views=False, env=HEADLESS,
                extra={"small_model": "anthropic/claude-haku-4-5"})
    config = tmp_path / "project" / "opencode.yaml"
    line = config.read_text().splitlines().index("small_model: anthropic/claude-haku-4-5") + 1
    msg = fe.execute("%agent hello")
    reply = fe.done(msg)["content"]
    assert reply["status"] == "error" and reply["ename"] == "UsageError"
    assert reply["evalue"] == (f"{config}:{line} small_model: anthropic/claude-haku-4-5 is not a model anthropic "
                               "offers; did you mean anthropic/claude-haiku-4-5? (%agent models lists them)")
    assert "ocnb-text" in fe.html(msg) and "anthropic/claude-haiku-4-5?" in fe.html(msg), "shown as prose"
    for listing in ("%agent models", "%agent config"):
        assert fe.run(listing)["content"]["status"] == "ok", listing
    fixed = yaml.safe_load(config.read_text())
    fixed["small_model"] = "anthropic/claude-haiku-4-5"
    config.write_text(yaml.safe_dump(fixed))
    ran = fe.execute("%agent hello")
    assert fe.done(ran)["content"]["status"] == "ok" and "Ran with the model meant." in fe.text(ran)
