"""Cards, transcripts and the terminal show the person what a call did in their words: the tool's summary and
what it printed, a diff or a table; never the sentences its result holds for the model. Markdown written to
be read renders, and text wraps between words."""

from __future__ import annotations

import re

from opencode_nb import Workspace
from opencode_nb.errors import MODEL_TEMPLATES, CorrectedError, RejectedError
from opencode_nb.provider.scripted import Scripted
from opencode_nb.session.models import ToolCompleted, ToolErrored, ToolPart
from opencode_nb.tool.plan import KEEP_PLANNING
from opencode_nb.tool.python import WHERE
from opencode_nb.tool.task import with_task_metadata
from opencode_nb.views.render import PRE, synthetic_html, synthetic_line, tool_card_html, tool_card_text
from opencode_nb.views.transcript import transcript_bundle

PLAN_NOTE = ("The plan at .opencode/plans/p.md has been approved and saved as 2 steps in notebook cells, which the "
             "person runs one by one. Do not carry out any step now.")
TABLE = "Sales by region:\n\n| region | total |\n|---|---:|\n| north | 30 |\n| south | 12 |"


def completed(tool: str, output: str, metadata: dict, **state: object) -> ToolPart:
    return ToolPart(session_id="s", message_id="m", call_id="c", tool=tool, state=ToolCompleted(
        input=state.pop("input", {}), output=output, title=str(state.pop("title", "")), metadata=metadata,
        started_at=0.0, ended_at=1.0))


def errored(tool: str, error: str, metadata: dict | None = None) -> ToolPart:
    return ToolPart(session_id="s", message_id="m", call_id="c", tool=tool, state=ToolErrored(
        input={"command": "rm -r build"}, error=error, metadata=metadata or {}, started_at=0.0, ended_at=1.0))


def visible_text(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html)


def assert_no_model_text(shown: str) -> None:
    for template in (*MODEL_TEMPLATES, WHERE["live"], KEEP_PLANNING, "Do not carry out", "task_metadata",
                     "The person can undo"):
        assert template not in shown, template


def test_a_live_python_card_says_where_it_ran_for_the_person_and_shows_what_it_printed():
    output = (f"{WHERE['live']}\n\nOutput:\n3 rows\n\nIn the person's namespace, created: df.\n\n"
              "The person can undo the new bindings with `%agent undo`.")
    part = completed("python", output, {"summary": "Ran in your namespace: created df", "person_output": "3 rows",
                                        "run": {"mode": "live"}}, input={"code": "df = load()"})
    html, text = tool_card_html(part), tool_card_text(part)
    assert "Ran in your namespace: created df" in html and "3 rows" in html
    assert "    Ran in your namespace: created df\n    3 rows" in text
    assert_no_model_text(visible_text(html))
    assert_no_model_text(text)


def test_a_plain_reject_reads_rejected_by_you_and_feedback_is_quoted():
    plain = errored("bash", str(RejectedError()), {"summary": RejectedError().summary})
    assert "Rejected by you" in tool_card_html(plain) and tool_card_text(plain).endswith("    Rejected by you")
    said = CorrectedError("build is mine")
    corrected = errored("bash", str(said), {"summary": said.summary})
    assert "Rejected by you: “build is mine”" in tool_card_text(corrected)
    for part in (plain, corrected):
        assert_no_model_text(visible_text(tool_card_html(part)))


def test_a_refusal_stored_before_summaries_existed_still_reads_as_one():
    old = errored("bash", str(CorrectedError("not now")))
    assert "Rejected by you: “not now”" in tool_card_text(old)
    assert_no_model_text(tool_card_text(old))


def test_a_task_answer_renders_its_markdown_table_as_a_table():
    part = completed("task", with_task_metadata(TABLE, "ses_child"),
                     {"summary": "@general answered", "person_output": TABLE, "markdown": True,
                      "session_id": "ses_child"}, input={"description": "Sum", "subagent_type": "general"})
    html = tool_card_html(part)
    assert "<table" in html and "<td" in html and "| region |" not in html
    assert "word-break:normal" in html and "break-all" not in html
    assert_no_model_text(visible_text(html))


def test_an_answer_stored_without_a_summary_still_renders_as_markdown_without_the_models_block():
    part = completed("task", with_task_metadata(TABLE, "ses_child"), {"session_id": "ses_child"},
                     input={"description": "Sum", "subagent_type": "general"})
    html = tool_card_html(part)
    assert "<table" in html and "task_metadata" not in html


def test_an_approved_plan_shows_the_plan_and_not_the_instructions_for_the_model():
    plan = "# Greet\n\n1. Write `hello.txt`.\n2. Count its words.\n"
    part = completed("plan_exit", "The person approved the plan. ... Do not carry out any step now: end your turn.",
                     {"summary": "Saved the plan as 2 steps in cells below; run them one by one",
                      "person_output": plan, "markdown": True}, title="Saved the plan as 2 steps in cells")
    html = tool_card_html(part)
    assert "Saved the plan as 2 steps in cells below" in html and "<code>hello.txt</code>" in html
    assert_no_model_text(visible_text(html))
    assert_no_model_text(tool_card_text(part))


def test_printed_text_wraps_between_words():
    assert "word-break:normal" in PRE and "overflow-wrap:break-word" in PRE


def test_a_note_written_for_the_model_is_shown_as_who_takes_over_or_not_at_all():
    assert synthetic_html(PLAN_NOTE) == ""
    assert "@build takes over" in synthetic_html(PLAN_NOTE, "build")
    assert synthetic_line("The person mentioned @sales, a variable in their kernel:\nDataFrame 3×2") == (
        "@sales: its description was given to the agent")


async def test_the_transcript_of_a_rejected_call_and_a_mode_switch_holds_no_sentence_for_the_model(tmp_path):
    ws = Workspace(tmp_path, {"model": "scripted/t", "permission": {"bash": "ask"}}, data_dir=tmp_path / "d",
                   env={}, on_ask=lambda request: "reject", on_question=lambda request: [["Yes"]])
    ws.providers.register("scripted", Scripted([
        {"tool_calls": [{"name": "plan_enter", "input": {}}]},
        {"tool_calls": [{"name": "bash", "input": {"command": "rm -r build", "description": "Clean"}}]},
    ]))
    session = ws.sessions.create(str(tmp_path))
    await ws.prompt(session.id, "clean up")
    bundle = transcript_bundle(ws, session.id, status="rejected")
    html, text = visible_text(bundle["text/html"]), bundle["text/plain"]
    assert "Rejected by you" in html and "Rejected by you" in text
    assert "@plan takes over" in html and "⇄ @plan takes over" in text
    assert_no_model_text(html)
    assert_no_model_text(text)
    assert "Research the task" not in html + text
    await ws.aclose()


async def test_the_live_view_says_who_takes_over_at_a_mode_switch(tmp_path):
    from opencode_nb.views import SessionView, ViewHub

    ws = Workspace(tmp_path, {"model": "scripted/t"}, data_dir=tmp_path / "d", env={},
                   on_question=lambda request: [["Yes"]])
    ws.providers.register("scripted", Scripted([{"tool_calls": [{"name": "plan_enter", "input": {}}]},
                                                {"text": "Planning now."}]))
    session = ws.sessions.create(str(tmp_path))
    hub = ViewHub(ws.bus)
    view = SessionView(ws, hub, session.id, floor="")
    view.start()
    await ws.prompt(session.id, "plan it")
    view.finish("done")
    view.flush()
    shown = "".join(w.value for w in _htmls(view.widget))
    assert "⇄ @plan takes over" in shown
    assert_no_model_text(visible_text(shown))
    view.close()
    hub.close()
    await ws.aclose()


def _htmls(widget):
    import ipywidgets as widgets

    if isinstance(widget, widgets.HTML):
        yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from _htmls(child)
