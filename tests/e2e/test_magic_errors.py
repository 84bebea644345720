"""A new user in JupyterLab: a first prompt with no API key shows one clear message and nothing else, and the
listings read as the help says (a subagent's session indented under its parent, the default model marked)."""

from __future__ import annotations

import pytest
import yaml

from .lab import Lab

pytestmark = pytest.mark.e2e

CHILD = [{"tool_calls": [{"name": "task", "input": {"description": "Survey", "prompt": "look around",
                                                    "subagent_type": "explore"}}]},
         {"text": "The child looked around."},
         {"text": "The parent is done."}]


@pytest.fixture(scope="module")
def lab_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """No API key anywhere."""
    return {"OPENCODE_NB_DATA_DIR": str(tmp_path_factory.mktemp("ocnb-data")), "ANTHROPIC_API_KEY": "",
            "OPENAI_API_KEY": ""}


def test_a_first_prompt_without_a_key_shows_one_message_and_run_all_stops_there(lab: Lab) -> None:
    lab.write_notebook("first.ipynb", ["%load_ext opencode_nb", "%%agent\nhello there", "print('after')"])
    lab.open_notebook("first.ipynb")
    lab.page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    lab.wait_cell_done(1)
    lab.wait_output(1, "No API key for anthropic")
    outputs = lab.cell(1).locator(".jp-OutputArea-child")
    # the kernel's first %agent cell starts with the one line on the notebook defaults; then the one message
    assert outputs.count() == 2, "one message: no live view, no transcript header with unknowns"
    assert outputs.nth(0).inner_text().startswith("Notebook defaults:")
    text = lab.output_text(1)
    assert "OPENAI_API_KEY" in text and "Ollama, llama.cpp, vLLM" in text and "--model scripted/demo" in text
    assert "@?" not in text and "Traceback" not in text
    lab.wait_kernel_idle()
    assert lab.prompt(2) == "[ ]" and "after" not in lab.output_text(2), "the failed cell stops Run All"


def test_sessions_and_models_read_as_the_help_says(lab: Lab) -> None:
    project = lab.root / "child"
    project.mkdir()
    (project / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/e2e", "permission": {"*": "allow"}, "provider": {"scripted": {"script": CHILD}}}))
    lab.write_notebook("child/listings.ipynb", ["%load_ext opencode_nb", "%%agent\nsurvey the project",
                                                "%agent sessions", "%agent models"])
    lab.open_notebook("child/listings.ipynb")
    for index in range(4):
        lab.run_cell(index)
        lab.wait_cell_done(index)
    rows = lab.cell(2).locator("tbody tr")
    assert rows.count() == 2
    parent, child = (rows.nth(i).locator("td").first for i in range(2))
    assert parent.inner_text().startswith("▶ ses_") and child.inner_text().startswith("└\u00a0ses_")
    assert child.bounding_box()["x"] == parent.bounding_box()["x"]
    lab.wait_output(3, "▶* scripted/e2e")
    lab.wait_output(3, "In use: scripted/e2e")
