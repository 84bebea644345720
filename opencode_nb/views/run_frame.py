"""The frame of a run as the card and the transcript show it: its header line, its todo list, the closing
sentence of a run that ended at a refusal, and a child session's section title.

Pure functions of stored models, like `render.py`'s parts, so the live card and the saved transcript agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import REJECTED
from ..question.service import DISMISSED
from ..session.models import ToolPart
from ..values import Todo
from .colors import HUES, MUTED
from .labels import summary_title
from .markdown import escape, markdown_html
from .render import BOX, COLORS, error_text, seconds

TODO_MARKS = {"pending": "☐", "in_progress": "◐", "completed": "☑", "cancelled": "☒"}
TEXT_TODO_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]", "cancelled": "[-]"}

ENDED_TODO = {"stopped": "stopped here", "error": "interrupted by an error", "rejected": "ended by a refusal"}
"""How an item still in progress reads once its run has ended that way; any other ending: `UNFINISHED`."""
UNFINISHED = "unfinished when the run ended"


def todo_html(todos: Iterable[Todo], *, ended: str | None = None) -> str:
    """The todo list. `ended`: how the run showing it ended (None while it runs); an item still in progress
    then says so instead of spinning on, since nothing works on it any more."""
    items = []
    for todo in todos:
        left = ended is not None and todo.status == "in_progress"
        style = f"text-decoration:line-through;color:{MUTED}" if todo.status in ("completed", "cancelled") else (
            "font-weight:bold" if todo.status == "in_progress" and not left else "")
        mark = TODO_MARKS["pending" if left else todo.status]
        note = f' <i style="color:{MUTED}">— {escape(_ended_todo(ended))}</i>' if left else ""
        items.append(f'<div class="ocnb-todo-item ocnb-todo-{"left" if left else todo.status}" style="{style}">'
                     f"{mark} {inline_markdown(todo.content)}{note}</div>")
    if not items:
        return ""
    return (f'<div class="ocnb-todos" style="{BOX.format(color=HUES["system"])}"><b>Todo</b>' + "".join(items)
            + "</div>")


def todo_text(todos: Iterable[Todo], *, ended: str | None = None) -> str:
    lines = []
    for todo in todos:
        left = ended is not None and todo.status == "in_progress"
        mark = TEXT_TODO_MARKS["pending" if left else todo.status]
        lines.append(f"  {mark} {todo.content}" + (f" ({_ended_todo(ended)})" if left else ""))
    return "\n".join(lines)


def _ended_todo(ended: str | None) -> str:
    return ENDED_TODO.get(ended or "", UNFINISHED)


def inline_markdown(text: str) -> str:
    """One line of markdown (code spans, emphasis, links) as inline HTML: a todo item, not a paragraph. Text
    that would render as a block (a list, a heading) is shown as it was written."""
    rendered = markdown_html(text).strip()
    if rendered.startswith("<p>") and rendered.endswith("</p>") and rendered.count("<p>") == 1:
        return rendered[3:-4]
    return escape(text)


# ---------------------------------------------------------------------------------------------- header


def usage_text(tokens: int, cost: float) -> str:
    return f"{tokens:,} tokens · ${cost:.4f}"


STATUS_COLORS = {"running": "running", "idle": "completed", "done": "completed", "retry": "warning",
                 "rejected": "error", "stopped": "error", "error": "error"}
"""The colour of each state a run's header can show (a state not listed is muted: starting, queued)."""


def header_html(*, agent: str, model: str, title: str, status: str, elapsed_s: float | None, tokens: int,
                cost: float) -> str:
    color = COLORS[STATUS_COLORS[status]] if status in STATUS_COLORS else MUTED
    clock = f" · {int(elapsed_s)}s" if elapsed_s is not None and status in ("running", "retry") else (
        f" · {seconds(elapsed_s)}" if elapsed_s is not None else "")
    return (f'<div class="ocnb-header" style="font-size:12px;color:{MUTED}">'
            f"<b>@{escape(agent)}</b> · <code>{escape(model)}</code> · {escape(title)} · "
            f'<span class="ocnb-status ocnb-status-{escape(status)}" style="color:{color}">{escape(status)}</span>'
            f"{clock} · {usage_text(tokens, cost)}</div>")


def refused_call(parts: Iterable[Any]) -> ToolPart | None:
    """The call whose refusal ended a run, among its last answer's parts: the last one that errored."""
    errored = [p for p in parts if isinstance(p, ToolPart) and p.state.status == "error"]
    return errored[-1] if errored else None


def ended_note(status: str, refused: ToolPart | None = None) -> str:
    """The closing sentence of a run that did not end by itself: a refused call ("rejected"), else "".

    A stop and an error already close their run with a line of their own (the transcript's, the cell's).
    """
    if status != "rejected":
        return ""
    if refused is None:
        return "The run ended at a refusal. To let the agent carry on instead, reject with feedback."
    error = refused.state.error if refused.state.status == "error" else ""
    if refused.tool == "question" and error == DISMISSED:
        return "Stopped by your reply: you dismissed the question, and that ends the run."
    if error == REJECTED:
        return (f"Stopped by your reply: you rejected the {refused.tool} call, and a plain Reject ends the run. "
                "To let the agent carry on instead, write what it should do and press “Reject with feedback”.")
    return f"The run ended at the refused {refused.tool} call: {error_text(refused) if error else 'no reason given'}"


def ended_html(status: str, refused: ToolPart | None = None) -> str:
    note = ended_note(status, refused)
    if not note:
        return ""
    return (f'<div class="ocnb-ended ocnb-ended-{escape(status)}" style="color:{COLORS["warning"]};margin:4px 0;'
            f'white-space:pre-wrap">■ {escape(note)}</div>')


def task_state(part: ToolPart | None) -> str:
    """How far a task call got, in the word its child section's title uses."""
    if part is None or part.state.status == "pending" or part.state.status == "running":
        return "running"
    if part.state.status == "completed":
        return "done"
    return "stopped" if (part.state.metadata or {}).get("interrupted") else "failed"


def child_title(agent: str, description: str, tools: Sequence[Mapping[str, Any]], state: str) -> str:
    """The header of a child session's collapsible section: who, what, and how far it got.

    Args:
        tools: the task call's `tools` metadata, one `{"tool", "status", "title", "input"}` entry per call
            of the child; a call still without a title is named from its input, as its own card names it.
        state: `task_state` of the task call: running, done, failed or stopped.
    """
    n = len(tools)
    if state == "done" and any(t.get("status") == "error" for t in tools):
        state = "done, with errors"
    now = next((t for t in reversed(tools) if t.get("status") == "running"), None) if state == "running" else None
    doing = f": {now.get('tool')} {summary_title(now)[:60]}".rstrip() if now else ""
    return f"@{agent} — {description} · {n} tool{'s' * (n != 1)}, {state}{doing}"
