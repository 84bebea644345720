"""The extension in a real ipykernel, driven through jupyter_client as JupyterLab drives it."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.timeout(90)

SAY_HI = [
    {"text": "Let me check.",
     "tool_calls": [{"name": "bash", "input": {"command": "echo hi", "description": "say hi"}}]},
    {"text": "Done: it printed hi."},
]
SLOW = [
    {"text": "Working on it.",
     "tool_calls": [{"name": "bash", "input": {"command": "sleep 30", "description": "wait"}}]},
    {"text": "This must not be reached."},
]


def test_load_ext_registers_the_magics_and_help_lists_the_subcommands(kernel):
    fe = kernel(SAY_HI)
    msg = fe.execute("%agent help")
    assert fe.done(msg)["content"]["status"] == "ok"
    text = fe.text(msg)
    for word in ("sessions", "resume", "permissions", "stop", "config", "Agent.model"):
        assert word in text


@pytest.mark.parametrize("on_subshell", [False, True], ids=["plain", "subshell"])
def test_an_allow_click_sent_while_the_cell_runs_lets_the_tool_run(kernel, on_subshell):
    fe = kernel(SAY_HI)
    subshell = fe.create_subshell() if on_subshell else None
    msg = fe.execute("%%agent\nsay hi please")
    button = fe.wait_button("Allow once")
    assert fe.reply_or_none(msg) is None, "the cell must still be running while the ask waits"
    fe.click(button, subshell_id=subshell)
    reply = fe.done(msg)
    assert reply["content"]["status"] == "ok"
    text = fe.text(msg)
    assert "✓ bash say hi" in text and "    hi" in text
    assert "build asked for bash echo hi: allowed once" in text
    assert "Done: it printed hi." in text
    assert "<details" in fe.html(msg) or "ocnb-transcript" in fe.html(msg)


def test_reject_with_feedback_reaches_the_model_as_the_tool_result(kernel):
    fe = kernel(SAY_HI)
    msg = fe.execute("%%agent\nsay hi please")
    fe.wait_button("Reject with feedback")
    text_field = fe.wait_for(lambda: next((cid for cid, s in fe.models.items() if s.get("_model_name") == "TextModel"
                                           and "instead" in (s.get("placeholder") or "")), None), what="feedback field")
    fe.set_value(text_field, value="use printf instead")
    fe.click(fe.wait_button("Reject with feedback"))
    assert fe.done(msg)["content"]["status"] == "ok"
    text = fe.text(msg)
    assert "✗ bash" in text and "use printf instead" in text
    assert 'rejected: "use printf instead"' in text


def test_the_stop_button_stops_the_agent_and_keeps_what_it_did(kernel):
    fe = kernel(SLOW)
    msg = fe.execute("%%agent\nwait a while")
    fe.wait_for(lambda: any("ocnb-tool ocnb-running" in str(s.get("value", "")) for s in list(fe.models.values())),
                what="the running tool card")
    started = time.time()
    fe.click(fe.wait_button("Stop"))
    assert fe.done(msg)["content"]["status"] == "error"  # a stopped cell stops Run All, as an interrupt does
    assert time.time() - started < 10, "long before the 30 s command would end"
    text = fe.text(msg)
    assert "stopped" in text and "Working on it." in text
    assert "must not be reached" not in text


def test_a_kernel_interrupt_cancels_the_agent_promptly_and_the_session_goes_on(kernel):
    fe = kernel([*SLOW[:1], {"text": "Back again."}])
    msg = fe.execute("%%agent\nwait a while")
    fe.wait_for(lambda: any("ocnb-tool ocnb-running" in str(s.get("value", "")) for s in list(fe.models.values())),
                what="the running tool card")
    started = time.time()
    fe.interrupt()
    reply = fe.done(msg)
    assert time.time() - started < 10, "long before the 30 s command would end"
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "AgentStopped"
    assert "stopped" in fe.text(msg)
    again = fe.execute("%agent are you there?")
    assert fe.done(again)["content"]["status"] == "ok"
    assert "Back again." in fe.text(again)


def test_headless_runs_refuse_asks_by_default_and_say_why(kernel):
    fe = kernel(SAY_HI, render_views=False, env={"OPENCODE_NB_HEADLESS": "1"})
    msg = fe.execute("%%agent\nsay hi please")
    assert fe.done(msg)["content"]["status"] == "ok"
    text = fe.text(msg)
    assert "rejected (refused by policy: nobody is present to ask)" in text
    assert "Done: it printed hi." in text
    assert not fe.buttons("Allow once"), "a headless run shows no prompt"


def test_a_headless_allow_policy_lets_asks_through(kernel):
    fe = kernel(SAY_HI, render_views=False, env={"OPENCODE_NB_HEADLESS": "1", "OPENCODE_NB_PERMISSION": "allow"})
    msg = fe.execute("%%agent\nsay hi please")
    assert fe.done(msg)["content"]["status"] == "ok"
    text = fe.text(msg)
    assert "allowed once (allowed by policy: nobody is present to ask)" in text and "    hi" in text


def test_a_front_end_that_never_shows_the_view_is_treated_as_headless(kernel):
    fe = kernel(SAY_HI, render_views=False)
    fe.run("%config Agent.probe_timeout_s = 0.5")
    msg = fe.execute("%%agent\nsay hi please")
    reply = fe.done(msg, timeout=20)["content"]
    assert reply["status"] == "ok", (reply.get("ename"), reply.get("evalue"), fe.text(msg))
    assert "refused by policy" in fe.text(msg)


def test_detached_mode_returns_at_once_and_the_view_finishes_later(kernel):
    fe = kernel([{**SAY_HI[0], "text": "Detached."}, SAY_HI[1]])
    msg = fe.execute("%%agent --bg\nsay hi please")
    assert fe.done(msg)["content"]["status"] == "ok"
    button = fe.wait_button("Allow once")
    fe.click(button)
    fe.wait_for(lambda: "Done: it printed hi." in fe.text(msg), what="the transcript of the detached run")


def test_consecutive_cells_continue_the_session_and_sessions_lists_it(kernel):
    fe = kernel([{"text": "First answer."}, {"text": "Second answer."}], render_views=False,
                env={"OPENCODE_NB_HEADLESS": "1"})
    fe.run("%agent first question")
    fe.run("answer = 42")
    second = fe.execute("%%agent\nthe value is {answer}")
    assert fe.done(second)["content"]["status"] == "ok"
    listing = fe.execute("%agent sessions")
    fe.done(listing)
    rows = [line for line in fe.text(listing).splitlines() if line.startswith("▶ ses_")]
    assert len(rows) == 1
    check = fe.execute("import opencode_nb.kernel as k; ws = k.current().workspace(); "
                       "print([p.text for m in ws.sessions.messages(k.current().session_id) for p in m.parts "
                       "if getattr(p, 'text', None) and m.message.role == 'user'])")
    fe.done(check)
    assert "'the value is 42'" in fe.text(check)


def test_a_prompt_naming_an_unknown_variable_is_an_error_that_says_how_to_escape_braces(kernel):
    fe = kernel([{"text": "unused"}], render_views=False, env={"OPENCODE_NB_HEADLESS": "1"})
    msg = fe.execute("%%agent\nlook at {nothing_here}")
    reply = fe.done(msg)
    assert reply["content"]["status"] == "error"
    assert "{{nothing_here}}" in reply["content"]["evalue"]


def test_an_interrupt_of_an_idle_kernel_stops_detached_agents_and_the_kernel_lives_on(kernel):
    fe = kernel([*SLOW[:1], {"text": "Back again."}])
    msg = fe.execute("%%agent --bg\nwait a while")
    assert fe.done(msg)["content"]["status"] == "ok"
    fe.wait_for(lambda: any("ocnb-tool ocnb-running" in str(s.get("value", "")) for s in list(fe.models.values())),
                what="the running tool card")
    started = time.time()
    fe.interrupt()
    fe.wait_for(lambda: "stopped" in fe.text(msg), timeout=5, what="the stopped transcript")
    assert time.time() - started < 10, "long before the 30 s command would end"
    check = fe.execute("print(1 + 1)")
    assert fe.done(check)["content"]["status"] == "ok" and "2" in fe.text(check)


def test_finished_views_close_their_widgets(kernel):
    fe = kernel(SAY_HI)
    msg = fe.execute("%%agent\nsay hi please")
    fe.click(fe.wait_button("Allow once"))
    fe.done(msg)
    check = fe.execute("from ipywidgets.widgets.widget import _instances; print('open widgets:', len(_instances))")
    fe.done(check)
    assert "open widgets: 0" in fe.text(check), "the live view's widgets are closed once the transcript replaces it"


def test_loaded_from_the_kernel_config_the_extension_still_lands_interrupts(kernel):
    fe = kernel(SLOW, from_config=True, render_views=False, env={"OPENCODE_NB_HEADLESS": "1"})
    msg = fe.execute("%agent wait a while")
    fe.wait_for(lambda: fe.outputs(msg), what="the agent's first output")
    time.sleep(0.5)
    started = time.time()
    fe.interrupt()
    reply = fe.done(msg)
    assert reply["content"]["ename"] == "AgentStopped" and time.time() - started < 10


def test_permissions_lists_the_rules_of_the_agent_the_next_prompt_goes_to(kernel):
    fe = kernel([{"text": "A plan."}], render_views=False, env={"OPENCODE_NB_HEADLESS": "1"})
    fe.run("%%agent --agent plan\nplan it")
    assert "Rules of @plan" in fe.text(fe.run_id("%agent permissions")), "the session's latest agent carries on"
    fe.run('%config Agent.agent = "build"')
    assert "Rules of @build" in fe.text(fe.run_id("%agent permissions")), "the notebook's setting comes first"
