"""The %agent subcommands, settings and prompt forms in a real kernel."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..test_extension import SAY_HI

pytestmark = pytest.mark.timeout(90)
HEADLESS = {"OPENCODE_NB_HEADLESS": "1"}


def test_the_front_end_extension_hello_makes_asks_interactive_and_names_the_notebook(kernel):
    fe = kernel(SAY_HI, render_views=False, hello={"hello": "JupyterLab", "path": "/work/analysis.ipynb"})
    msg = fe.execute("%%agent\nsay hi please")
    fe.click(fe.wait_button("Allow once"))
    assert fe.done(msg)["content"]["status"] == "ok"
    check = fe.execute("import opencode_nb.kernel as k; a = k.current(); "
                       "print(a.presence.mode, a.notebook_path, a.workspace().sessions.get(a.session_id).notebook)")
    fe.done(check)
    assert "interactive /work/analysis.ipynb /work/analysis.ipynb" in fe.text(check)


def test_a_second_prompt_to_a_busy_session_waits_its_turn(kernel):
    fe = kernel([*SAY_HI, {"text": "Second prompt answered."}])
    first = fe.execute("%%agent --bg\nsay hi please")
    fe.done(first)
    allow = fe.wait_button("Allow once")
    second = fe.execute("%agent and then?")
    fe.wait_for(lambda: "queued" in fe.html(second) or any(
        "queued" in str(s.get("value", "")) for s in list(fe.models.values())), what="the queued notice")
    assert fe.reply_or_none(second) is None
    fe.click(allow)
    assert fe.done(second)["content"]["status"] == "ok"
    assert "Second prompt answered." in fe.text(second)
    assert "Second prompt answered." not in fe.text(first)
    assert "Done: it printed hi." in fe.text(first)


def test_one_line_prompts_slash_commands_and_agent_options(kernel):
    fe = kernel([{"text": "Planned."}], render_views=False, env=HEADLESS)
    help_msg = fe.execute("%%agent\n/help")
    fe.done(help_msg)
    assert "/init" in fe.text(help_msg) or "/compact" in fe.text(help_msg)
    plan = fe.execute("%agent --agent plan make a plan")
    fe.done(plan)
    assert "@plan" in fe.text(plan) and "Planned." in fe.text(plan)


def test_config_sets_the_model_and_bad_values_are_refused_by_traitlets(kernel):
    fe = kernel([{"text": "From the other model."}], render_views=False, env=HEADLESS,
                extra={"provider": {"scripted": {"script": [{"text": "From the other model."}]},
                                    "other": {"type": "scripted", "script": [{"text": "From the other model."}]}}})
    fe.run('%config Agent.model = "other/fast"')
    msg = fe.execute("%agent hello")
    fe.done(msg)
    assert "other/fast" in fe.text(msg) and "From the other model." in fe.text(msg)
    bad = fe.execute('%config Agent.mode = "sideways"')
    fe.done(bad)  # IPython's %config reports a refused value and goes on
    assert "expected any of ['auto', 'attached', 'detached'], not the str 'sideways'" in fe.text(bad)
    mode = fe.execute("import opencode_nb.kernel as k; print(k.current().settings.mode)")
    fe.done(mode)
    assert fe.text(mode).strip() == "auto", "a refused value leaves the setting as it was"


def test_sessions_new_resume_permissions_models_and_config(kernel):
    fe = kernel([{"text": "one"}, {"text": "two"}, {"text": "three"}], render_views=False, env=HEADLESS,
                extra={"provider": {"scripted": {"script": [{"text": "one"}, {"text": "two"}, {"text": "three"}]},
                                    "openai": {"api_key": "sk-secret-value-123"}}})
    fe.run("%agent first")
    first_id = fe.text(fe.run_id("import opencode_nb.kernel as k; print(k.current().session_id)")).strip()
    new = fe.execute("%agent new")
    fe.done(new)
    assert "new session" in fe.text(new)
    fe.run("%agent second")
    listing = fe.execute("%agent sessions")
    fe.done(listing)
    assert fe.text(listing).count("ses_") == 2
    resume = fe.execute(f"%agent resume {first_id}")
    fe.done(resume)
    assert first_id in fe.text(resume)
    fe.run("%agent third")
    messages = fe.execute("import opencode_nb.kernel as k; a = k.current(); "
                          "print(len(a.workspace().sessions.messages(a.session_id)))")
    fe.done(messages)
    assert fe.text(messages).strip() == "4", "the resumed session got the third prompt"
    unknown = fe.execute("%agent resume ses_nope")
    assert fe.done(unknown)["content"]["status"] == "error"
    assert "ses_nope" in fe.reply(unknown)["content"]["evalue"]
    perms = fe.execute("%agent permissions")
    fe.done(perms)
    assert "last matching rule wins" in fe.text(perms) and "answered by policy 'deny'" in fe.text(perms)
    models = fe.execute("%agent models")
    fe.done(models)
    assert "anthropic/claude-sonnet-4-6" in fe.text(models)
    config = fe.execute("%agent config")
    fe.done(config)
    assert "sk-secret-value-123" not in fe.text(config) and "•••• (set)" in fe.text(config)


def test_unloading_removes_the_magics(kernel):
    fe = kernel(SAY_HI, render_views=False, env=HEADLESS)
    fe.run("%unload_ext opencode_nb")
    msg = fe.execute("%agent help")
    assert fe.done(msg)["content"]["status"] == "error"


def test_terminal_ipython_prints_the_session_and_asks_on_the_terminal(tmp_path: Path):
    import yaml

    (tmp_path / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/t", "permission": {"bash": "ask"}, "provider": {"scripted": {"script": SAY_HI}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_NB_")}
    env.update(OPENCODE_NB_DATA_DIR=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    lines = "%load_ext opencode_nb\n%agent say hi please\no\nprint('after the agent')\n"
    result = subprocess.run([sys.executable, "-m", "IPython", "--simple-prompt", "--no-banner", "--colors=NoColor"],
                            input=lines, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    out = result.stdout
    assert "? build asks for bash: echo hi" in out and "[o]nce" in out
    assert "✓ bash say hi" in out
    assert "allowed once" not in out, "the prompt and the typed answer are the ask's one line: no echo of it"
    assert "build: Done: it printed hi." in out
    assert "after the agent" in out


def test_reloading_a_broken_config_file_says_what_is_wrong_and_keeps_the_previous_one(kernel, tmp_path):
    fe = kernel([{"text": "First."}, {"text": "Kept and running."}], render_views=False, env=HEADLESS)
    fe.run("%agent hello")
    config = tmp_path / "project" / "opencode.yaml"
    good = config.read_text()
    config.write_text(good + "agent:\n  build:\n    steps: -3\n")
    reload = fe.execute("%agent reload")
    reply = fe.done(reload)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "UsageError"
    message = reply["content"]["evalue"]
    assert "opencode.yaml:" in message and "agent.build.steps: -3" in message and "keeps the configuration" in message
    assert not any("Traceback" in line for line in reply["content"]["traceback"])
    kept = fe.execute("%agent hello")
    assert fe.done(kept)["content"]["status"] == "ok" and "Kept and running." in fe.text(kept)
    assert "steps" not in fe.text(kept), "said once, by the reload"
    config.write_text(good)
    fixed = fe.execute("%agent reload")
    assert fe.done(fixed)["content"]["status"] == "ok"
    assert "Configuration read again" in fe.text(fixed)


def test_a_kernel_started_by_a_jupyter_server_for_a_notebook_asks_the_person(kernel, tmp_path):
    notebook = str(tmp_path / "project" / "analysis.ipynb")
    fe = kernel(SAY_HI, render_views=False, env={"JPY_SESSION_NAME": notebook})
    msg = fe.execute("%%agent\nsay hi please")
    fe.click(fe.wait_button("Allow once"))
    assert fe.done(msg)["content"]["status"] == "ok"
    assert "allowed once" in fe.text(msg) and "policy" not in fe.text(msg)


def test_a_run_that_ends_in_an_error_fails_the_cell_after_showing_the_transcript(kernel):
    fe = kernel([{"text": "Starting.", "error": {"message": "invalid x-api-key", "status": 401}}],
                render_views=False, env=HEADLESS)
    msg = fe.execute("%agent do it")
    reply = fe.done(msg)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "UsageError"
    assert "invalid x-api-key" in reply["content"]["evalue"]
    assert "Starting." in fe.text(msg), "the transcript is there too"


def test_show_renders_the_current_sessions_whole_transcript(kernel):
    fe = kernel([{"text": "First."}, {"text": "Second."}], render_views=False, env=HEADLESS)
    fe.run("%agent one")
    fe.run("%agent two")
    msg = fe.execute("%agent show")
    fe.done(msg)
    assert "you: one" in fe.text(msg) and "First." in fe.text(msg) and "you: two" in fe.text(msg)


def test_headless_deny_dismisses_the_plan_question_and_the_agent_carries_on(kernel):
    fe = kernel([{"tool_calls": [{"name": "plan_enter", "input": {}}]}, {"text": "Staying in build mode, then."}],
                render_views=False, env=HEADLESS)
    msg = fe.execute("%agent plan this first")
    assert fe.done(msg)["content"]["status"] == "ok"
    text = fe.text(msg)
    assert "dismissed by policy" in text and "Staying in build mode, then." in text


def test_a_prompt_where_no_await_is_possible_runs_detached_and_its_errors_still_show(kernel):
    fe = kernel([{"text": "From inside a function."}], render_views=False, env=HEADLESS)
    msg = fe.execute("def ask():\n    get_ipython().run_line_magic('agent', 'hello there')\nask()")
    assert fe.done(msg)["content"]["status"] == "ok"
    fe.wait_for(lambda: "From inside a function." in fe.text(msg), what="the detached run's transcript")
    bad = fe.execute("def ask():\n    get_ipython().run_line_magic('agent', 'look at {nothing_here}')\nask()")
    reply = fe.done(bad)
    assert reply["content"]["status"] == "error" and "{{nothing_here}}" in reply["content"]["evalue"]
