"""What a new user meets first in a notebook: a prompt with no API key, the listings, and editing the config.

Each test reads every output the kernel sent for a cell, as JupyterLab would show it.
"""

from __future__ import annotations

import time

import pytest
import yaml

from .frontend import FakeFrontend

pytestmark = pytest.mark.timeout(90)
HEADLESS = {"OPENCODE_NB_HEADLESS": "1"}
NO_KEYS = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}
LAB = {"hello": "JupyterLab", "path": "/work/analysis.ipynb"}
CHILD = [{"tool_calls": [{"name": "task", "input": {"description": "Survey", "prompt": "look around",
                                                    "subagent_type": "explore"}}]},
         {"text": "The child looked around."},
         {"text": "The parent is done."}]


def session_count(fe: FakeFrontend) -> int:
    msg = fe.run_id("import opencode_nb.kernel as k; print(len(k.current().workspace().sessions.list(None)))")
    return int(fe.text(msg).strip())


def test_a_prompt_with_no_api_key_is_one_clear_message_naming_the_other_ways_in(kernel):
    fe = kernel([], extra={"model": "anthropic/claude-sonnet-4-6"}, env=NO_KEYS, hello=LAB)
    msg = fe.execute("%%agent\nhello there")
    reply = fe.done(msg)
    assert reply["content"]["status"] == "error", "the cell fails, so Run All stops here"
    [output] = fe.outputs(msg)  # no live view, no transcript with an unknown agent and model: this one message
    assert output["msg_type"] == "display_data", "shown as text that wraps between words, not as stderr"
    message = output["content"]["data"]["text/plain"]
    assert message.startswith("UsageError: No API key for anthropic: set ANTHROPIC_API_KEY")
    for way in ("OPENAI_API_KEY", "Ollama, llama.cpp, vLLM", "type: openai-compatible", "--model scripted/demo"):
        assert way in message
    assert "Traceback" not in message and "@?" not in message
    listing = fe.execute("%agent sessions")
    fe.done(listing)
    assert "No sessions yet" in fe.text(listing), "the failed prompt left no empty session behind"
    assert session_count(fe) == 0


def test_a_prompt_stopped_before_it_wrote_anything_leaves_no_session(kernel):
    fe = kernel([{"text": "Never said."}], render_views=False)
    fe.run("%config Agent.probe_timeout_s = 20")  # no front end: the prompt waits for one to show itself
    msg = fe.execute("%%agent\nhello there")
    time.sleep(1.5)
    fe.interrupt()
    assert fe.done(msg)["content"]["status"] == "error"
    assert session_count(fe) == 0
    assert "No sessions yet" in fe.text(fe.run_id("%agent sessions"))


def test_sessions_lists_a_subagents_session_indented_under_its_parent(kernel):
    fe = kernel(CHILD, permission={"*": "allow"}, render_views=False, env=HEADLESS)
    fe.run("%agent survey the project")
    msg = fe.run_id("%agent sessions")
    rows = [line for line in fe.text(msg).splitlines() if "ses_" in line]
    assert len(rows) == 2 and rows[0].startswith("▶ ses_")
    assert rows[1].startswith("└\u00a0ses_"), "the child comes right under its parent, marked and indented"
    html = fe.html(msg)
    assert html.index("▶ ses_") < html.index("└\u00a0ses_"), "in HTML too, where plain spaces would collapse"


def test_models_marks_the_default_and_the_one_in_use_and_says_what_chose_it(kernel, tmp_path):
    fe = kernel([], render_views=False, env={**HEADLESS, **NO_KEYS})
    msg = fe.run_id("%agent models")
    text = fe.text(msg)
    assert "▶* scripted/test" in text, "the config's model is the default, and in use"
    assert f"In use: scripted/test ({tmp_path / 'project' / 'opencode.yaml'}:" in text
    assert "anthropic/claude-sonnet-4-6" in text and "no key: set ANTHROPIC_API_KEY" in text
    fe.run('%config Agent.model = "openai/gpt-5"')
    text = fe.text(fe.run_id("%agent models"))
    assert "▶  openai/gpt-5" in text and " * scripted/test" in text
    assert "In use: openai/gpt-5 (%config Agent.model). Default: scripted/test (" in text


def test_config_shows_every_value_in_force_where_it_came_from_and_no_secret(kernel, tmp_path):
    fe = kernel([], render_views=False, env={**HEADLESS, "TEAM_KEY": "sk-team-secret-4242"},
                extra={"provider": {"openai": {"api_key": "{env:TEAM_KEY}"}}})
    fe.run('%config Agent.mode = "detached"')
    text = fe.text(fe.run_id("%agent config"))
    config = tmp_path / "project" / "opencode.yaml"
    assert "sk-team-secret-4242" not in text
    lines = {line.split(":")[0].strip(): line for line in text.splitlines() if not line.startswith("#")}
    key = lines["api_key"]
    assert "•••• (set)" in key and f"# {config}:" in key and "from $TEAM_KEY" in key
    assert lines["model"].startswith("model: scripted/test") and f"# {config}:" in lines["model"]
    assert lines["sandbox"].startswith("sandbox: auto") and lines["sandbox"].endswith("# default")
    assert "default_agent: build" in lines["default_agent"]
    assert f"# files read: {config}" in text
    assert "Agent.mode = 'detached'    (%config)" in text and "Agent.model = None    (default)" in text


def test_config_warnings_are_one_plain_line_each_shown_once(kernel, tmp_path):
    fe = kernel([{"text": "One."}, {"text": "Two."}], render_views=False, env=HEADLESS, extra={"modle": "x/y"})
    first = fe.text(fe.run_id("%agent hello"))
    config = tmp_path / "project" / "opencode.yaml"
    [warning] = [line for line in first.splitlines() if "modle" in line]
    assert warning.startswith(f"warning: {config}:") and warning.endswith(
        "unknown key modle (did you mean model?); it is ignored")
    assert "ConfigWarning" not in first and "workspace.py" not in first and "load_config(" not in first
    assert "modle" not in fe.text(fe.run_id("%agent again")), "said once"


def test_an_edit_to_the_config_takes_effect_at_the_next_cell_without_reload(kernel, tmp_path):
    fe = kernel([{"text": "Old model."}], render_views=False, env=HEADLESS)
    fe.run("%agent hello")
    config = tmp_path / "project" / "opencode.yaml"
    edited = yaml.safe_load(config.read_text())
    edited["model"] = "other/fast"
    edited["provider"]["other"] = {"type": "scripted", "script": [{"text": "From the edited config."}]}
    config.write_text(yaml.safe_dump(edited))
    text = fe.text(fe.run_id("%agent and now?"))
    assert f"Configuration read again: {config} changed." in text
    assert "From the edited config." in text and "other/fast" in text
    assert "read again" not in fe.text(fe.run_id("%agent sessions")), "said once per change"


def test_an_edit_with_mistakes_keeps_the_previous_config_and_lists_every_mistake_once(kernel, tmp_path):
    fe = kernel([{"text": "First."}, {"text": "Still running."}], render_views=False, env=HEADLESS)
    fe.run("%agent hello")
    config = tmp_path / "project" / "opencode.yaml"
    good = config.read_text()
    config.write_text(good + "agent:\n  build:\n    steps: -3\n    temperature: 9\n")
    msg = fe.execute("%agent go on")
    assert fe.done(msg)["content"]["status"] == "ok", "the previous configuration still works"
    text = fe.text(msg)
    assert "keeps the configuration it read before" in text and "2 problems in the configuration" in text
    assert f"{config}:" in text and "agent.build.steps: -3" in text and "agent.build.temperature: 9" in text
    assert "Still running." in text
    assert "problems" not in fe.text(fe.run_id("%agent config")).split("# effective")[1]
    assert "cannot be used" in fe.text(fe.run_id("%agent config")), "config says it shows the previous one"
    config.write_text(good)
    text = fe.text(fe.run_id("%agent and again"))
    assert "Configuration read again" in text and "First." in text, "the script is read anew with the fixed file"


def test_a_config_broken_from_the_start_fails_the_prompt_with_every_problem(kernel, tmp_path):
    fe = kernel([{"text": "Fixed and running."}], render_views=False, env=HEADLESS,
                extra={"sandbox": "sometimes", "agent": {"build": {"steps": 0}}})
    reply = fe.done(msg := fe.execute("%agent hello"))
    assert reply["content"]["status"] == "error"
    [output] = fe.outputs(msg)
    text = output["content"]["data"]["text/plain"]
    assert text.startswith("UsageError: 2 problems in the configuration:")
    assert "sandbox: 'sometimes'" in text and "agent.build.steps: 0" in text
    config = tmp_path / "project" / "opencode.yaml"
    config.write_text(config.read_text().replace("sandbox: sometimes", "sandbox: auto").replace("steps: 0", "steps: 5"))
    assert "Fixed and running." in fe.text(fe.run_id("%agent hello"))


def test_a_run_that_fails_midway_says_why_once_under_its_transcript(kernel):
    fe = kernel([{"text": "Looking into it.", "tool_calls": [{"name": "glob", "input": {"pattern": "*"}}]},
                 {"error": {"message": "invalid x-api-key", "status": 401}}],
                permission={"*": "allow"}, render_views=False, env=HEADLESS)
    msg = fe.execute("%%agent\nhello there")
    reply = fe.done(msg)["content"]
    assert reply["status"] == "error", "a failed run fails its cell, so Run All stops there"
    text = fe.text(msg)
    assert "Looking into it." in text, "what the agent did before the failure stays in the cell"
    assert text.count("invalid x-api-key") == 1, text
    assert "@?" not in text and "Traceback" not in text
    shown = fe.text(fe.run_id("%agent show"))
    assert "invalid x-api-key" in shown, "the saved transcript still says how the run ended"
