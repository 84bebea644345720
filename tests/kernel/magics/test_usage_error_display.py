"""A mistake in an `%agent` line is shown as text that wraps between words, in a real kernel, and still fails its
cell: JupyterLab breaks the plain stderr text IPython prints for a `UsageError` anywhere ("sesi / ons"), so the
kernel shows ours as HTML, styled as an error, with the plain text as its twin. Other magics' usage errors are
shown exactly as IPython shows them."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(90)
HEADLESS = {"OPENCODE_NB_HEADLESS": "1"}


def test_a_mistyped_subcommand_is_shown_as_wrapping_html_and_fails_its_cell(kernel):
    fe = kernel([{"text": "Never said."}], render_views=False, env=HEADLESS)
    msg = fe.execute("%agent sesions")
    reply = fe.done(msg)["content"]
    assert reply["status"] == "error" and reply["ename"] == "UsageError"
    assert "did you mean %agent sessions?" in reply["evalue"]
    [shown] = fe.outputs(msg)
    assert shown["msg_type"] == "display_data", "not IPython's stderr line, which the page splits mid-word"
    html = shown["content"]["data"]["text/html"]
    assert 'class="ocnb-text' in html and "<pre" not in html and "rendermime-error-background" in html
    assert "did you mean %agent sessions?" in html
    assert shown["content"]["data"]["text/plain"] == f"UsageError: {reply['evalue']}"


def test_a_run_all_stops_at_the_refused_cell(kernel):
    fe = kernel([{"text": "Never said."}], render_views=False, env=HEADLESS)
    refused = fe.execute("%agent sesions")  # queued together, as Run All sends them (stop_on_error)
    after = fe.execute("ran_after = True")
    assert fe.done(refused)["content"]["status"] == "error"
    assert fe.reply(after)["content"]["status"] == "aborted"
    assert fe.run("assert 'ran_after' not in globals()")["content"]["status"] == "ok", "the next cell never ran"


def test_a_failed_prompt_and_a_refused_plan_line_are_shown_the_same_way(kernel):
    fe = kernel([{"text": "Never said."}], render_views=False, env=HEADLESS)
    for code in ("%%agent --bogus\nhello", "def f():\n    %agent --plan x\nf()"):
        msg = fe.execute(code)
        assert fe.done(msg)["content"]["status"] == "error", code
        kinds = [m["msg_type"] for m in fe.outputs(msg)]
        assert kinds == ["display_data"], (code, kinds)
        assert "<pre" not in fe.html(msg) and "UsageError: " in fe.text(msg)


def test_another_magics_usage_error_is_shown_as_ipython_shows_it(kernel):
    fe = kernel([{"text": "Never said."}], render_views=False, env=HEADLESS)
    for code in ("%timeit -Q 1", "%load_ext"):
        msg = fe.execute(code)
        reply = fe.done(msg)["content"]
        assert reply["status"] == "error" and reply["ename"] == "UsageError", code
        streams = [m for m in fe.outputs(msg) if m["msg_type"] == "stream"]
        assert [m["content"]["name"] for m in streams] == ["stderr"], code
        assert streams[0]["content"]["text"].startswith("UsageError: "), code
        assert not [m for m in fe.outputs(msg) if m["msg_type"] == "display_data"], code


def test_unloading_the_extension_puts_back_ipythons_own_handling(kernel):
    fe = kernel([{"text": "Never said."}], render_views=False, env=HEADLESS)
    assert fe.run("assert get_ipython().custom_exceptions != ()")["content"]["status"] == "ok"
    assert fe.run("%unload_ext opencode_nb")["content"]["status"] == "ok"
    assert fe.run("assert get_ipython().custom_exceptions == ()")["content"]["status"] == "ok"
