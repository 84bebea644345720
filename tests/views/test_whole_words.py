"""Text for a person reads whole: the kernel's help, listings and errors leave wrapping to the page (no break
made by hand in the middle of a sentence, no `break-all`), and an ask never says a word twice, never shows an
empty bullet, and says plainly what "Always allow" covers and what a refused call sent."""

from __future__ import annotations

import re

from pydantic import BaseModel, ValidationError

from opencode_nb.kernel.magics.listing import text
from opencode_nb.kernel.magics.subcommands import TABLE
from opencode_nb.permission.events import PermissionRequest
from opencode_nb.tool.person import invalid_call_summary
from opencode_nb.views.asks import always_note, permission_html, permission_record_html, permission_record_text
from opencode_nb.views.prose import blocks, prose_html


def ask(permission: str, patterns: list[str], always: list[str] | None = None) -> PermissionRequest:
    return PermissionRequest(id="per_1", session_id="ses_1", agent="build", permission=permission,
                             patterns=patterns, always=patterns if always is None else always)


def visible(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html)


def test_help_explanations_are_one_line_each_under_their_usage_column() -> None:
    rows = dict((line.split("  ")[0], (line, hang)) for line, hang in blocks(TABLE.help()) if line.startswith("%agent"))
    line, hang = rows["%agent skills"]
    assert "the ones a nearer skill shadows and the files that cannot be used" in line and hang == 25
    assert "%agent models" in rows, "the next usage is a row of its own, not joined to the one above"


def test_a_paragraph_broken_by_hand_is_one_line_but_a_yaml_example_keeps_its_lines() -> None:
    shown = [line for line, _ in blocks(TABLE.epilogue)]
    assert any("OPENAI_API_KEY, scripted/demo runs offline. A local OpenAI-compatible server" in s for s in shown)
    assert "    model: local/llama3.2" in shown and "    provider:" in shown


def test_a_list_of_problems_stays_one_problem_a_line() -> None:
    problems = "2 problems in the configuration:\n" + "\n".join(
        f"  /p/opencode.yaml:{n} permisions: unknown key; did you mean permission? It would have restricted tools"
        for n in (1, 2))
    assert len(blocks(problems)) == 3


def test_kernel_text_is_html_that_wraps_between_words_never_a_break_all_pre() -> None:
    bundle = text(TABLE.help())
    assert bundle["text/plain"] == TABLE.help()
    assert "<pre" not in bundle["text/html"] and "word-break:normal" in bundle["text/html"]
    assert "white-space:pre-wrap" in bundle["text/html"]
    assert "&lt;prompt&gt;" in prose_html("<prompt>")


def test_a_function_tool_ask_says_its_name_once() -> None:
    request = ask("query", ["query"])
    assert "query query" not in visible(permission_html(request))
    assert always_note(request) == "every query call by build in this session"
    assert "query query" not in permission_record_text(request, "once")
    assert "<code>" not in permission_record_html(request, "once")


def test_an_ask_for_anything_shows_no_bullet_holding_only_a_star() -> None:
    html = permission_html(ask("github_search", ["*"]))
    assert "<li>" not in html and "*" not in visible(html)
    assert always_note(ask("github_search", ["*"])) == "every github_search call by build in this session"


def test_an_ask_that_cannot_be_remembered_says_always_allows_only_this_call() -> None:
    note = always_note(ask("bash", ["curl x | sh"], always=[]))
    assert note == "only this call — calls like it are asked about every time"


def test_a_refused_call_says_what_the_agent_sent_and_what_fits() -> None:
    class Parameters(BaseModel):
        sql: str
        limit: int = 20

    try:
        Parameters(sql="select 1", limit="all")  # type: ignore[arg-type]
    except ValidationError as exc:
        summary = invalid_call_summary(exc)
    assert summary.startswith('Not called: limit was sent as "all" (string), but must be a valid integer')
