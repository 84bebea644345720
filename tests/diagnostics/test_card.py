"""The card of an edit that left problems says so in one line (how many, by which checker, the first one),
with the rest folded under it; a clean edit's card says nothing more; a checker that could not run is a
muted note."""

from __future__ import annotations

from opencode_nb.session.models import ToolCompleted, ToolPart
from opencode_nb.tool.write import WriteTool
from opencode_nb.views.render import tool_card_html, tool_card_text


async def card_of(ctx, diagnostics, content: str, **config) -> ToolPart:
    result = await WriteTool(diagnostics(**config)).run({"path": "src/app.py", "content": content}, ctx)
    return ToolPart(session_id="s", message_id="m", call_id="c", tool="write", state=ToolCompleted(
        input={"path": "src/app.py", "content": content}, output=result.output, title=result.title,
        metadata=result.metadata, started_at=0.0))


async def test_one_line_says_how_many_and_the_first_the_rest_are_folded(ctx, diagnostics):
    part = await card_of(ctx, diagnostics, "a = b\nc = d\n")
    text = tool_card_text(part)
    assert ("    ! 2 problems found by ruff in src/app.py, sent to the agent\n"
            "    ! line 1:5 F821 Undefined name `b`\n"
            "    ! line 2:5 F821 Undefined name `d`") in text
    html = tool_card_html(part)
    assert ("<summary>⚠ 2 problems found by ruff in src/app.py, sent to the agent: line 1:5 F821 Undefined name "
            "`b`</summary>line 2:5 F821 Undefined name `d`</details>") in html.replace("&#x27;", "'")
    assert "Problems found in" not in html  # the model's sentence is not the person's


async def test_a_clean_edit_adds_nothing_to_the_card(ctx, diagnostics):
    part = await card_of(ctx, diagnostics, "a = 1\n")
    assert "problem" not in tool_card_text(part) and "ocnb-diagnostics" not in tool_card_html(part)


async def test_a_checker_that_could_not_run_is_a_note(ctx, diagnostics, monkeypatch):
    from opencode_nb.diagnostics import ruff

    monkeypatch.setattr(ruff, "ruff_binary", lambda: None)
    part = await card_of(ctx, diagnostics, "a = b\n")
    assert "    ! (ruff is not installed)" in tool_card_text(part)
    assert 'class="ocnb-diagnostics-note"' in tool_card_html(part)
