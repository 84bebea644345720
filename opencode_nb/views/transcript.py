"""The static transcript a prompt cell leaves in the saved notebook.

Widget state does not survive a saved notebook, so when a run ends its cell output is replaced by this:
HTML that reads in JupyterLab without a kernel, on GitHub and in nbviewer (tool outputs and child sessions
in `<details>`), with a plain-text version beside it for every other reader. It is built from the store,
which holds everything the run produced, plus the records of asks and answers that only the bus saw.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..session.models import AssistantMessage, ReasoningPart, TextPart, ToolPart, UserMessage
from .labels import task_heading
from .markdown import escape
from .render import (
    COLORS,
    error_html,
    reasoning_html,
    seconds,
    synthetic_html,
    synthetic_line,
    text_html,
    tool_card_html,
    tool_card_text,
    user_html,
)
from .run_frame import (
    child_title,
    ended_html,
    ended_note,
    header_html,
    refused_call,
    task_state,
    todo_html,
    todo_text,
    usage_text,
)

if TYPE_CHECKING:
    from ..workspace import Workspace


@dataclass(frozen=True)
class Record:
    """An ask and its answer, for the transcript: the store keeps the tool call, not who allowed it."""

    session_id: str
    call_id: str | None
    html: str
    text: str


MAX_DEPTH = 6


@dataclass
class _Totals:
    tokens: int = 0
    cost: float = 0.0
    agent: str = ""
    model: str = ""


def transcript_bundle(ws: Workspace, session_id: str, *, since: str | None = None, records: Iterable[Record] = (),
                      status: str = "done", elapsed_s: float | None = None, prompts: bool = False,
                      ending: bool = True) -> dict[str, str]:
    """The `text/html` and `text/plain` transcript of `session_id` from message `since` on.

    `prompts` includes the person's own prompts; a prompt cell leaves them out, its input shows them.
    `ending=False` leaves out how the last reply ended (its error or stop): a prompt cell that fails says
    that itself, right under the transcript, and one problem should read as one message.
    """
    by_call: dict[str, list[Record]] = {}
    loose: dict[str, list[Record]] = {}
    for record in records:
        if record.call_id:
            by_call.setdefault(record.call_id, []).append(record)
        else:
            loose.setdefault(record.session_id, []).append(record)
    totals = _Totals()
    html_body, text_body = _session(ws, session_id, since, by_call, loose, totals, depth=0, prompts=prompts,
                                    ending=ending)
    session = ws.sessions.get(session_id)
    todos = ws.sessions.todos(session_id) if since is None or not _earlier_todos(ws, session_id, since) else []
    head = header_html(agent=totals.agent or "?", model=totals.model or "?", title=session.title, status=status,
                       elapsed_s=elapsed_s, tokens=totals.tokens, cost=totals.cost)
    note = _ended(ws, session_id, status) if ending else ("", "")
    ended = None if status in ("running", "retry") else status  # `%agent show` of a session still at work
    html = (f'<div class="ocnb-transcript" data-session="{escape(session_id)}">{head}'
            f"{todo_html(todos, ended=ended)}{html_body}{note[0]}</div>")
    clock = f" · {seconds(elapsed_s)}" if elapsed_s is not None else ""
    lines = [f"@{totals.agent} · {totals.model} · {session.title} · {status}{clock} · "
             f"{usage_text(totals.tokens, totals.cost)}"]
    if todos:
        lines += ["todo:", todo_text(todos, ended=ended)]
    lines += text_body
    if note[1]:
        lines.append(note[1])
    return {"text/html": html, "text/plain": "\n".join(lines)}


def _earlier_todos(ws: Workspace, session_id: str, since: str) -> bool:
    """Whether the stored todo list is an earlier run's: a model wrote it before `since` and not since.

    A list nobody's `todowrite` wrote is the kernel's (a plan's steps, set as each step runs): it is current.
    """
    last = None
    for entry in ws.sessions.messages(session_id):
        if any(isinstance(p, ToolPart) and p.tool == "todowrite" for p in entry.parts):
            last = entry.message.id
    return last is not None and last < since


def _ended(ws: Workspace, session_id: str, status: str) -> tuple[str, str]:
    """The closing sentence of a run a refusal ended, as HTML and text ("" for any other ending)."""
    if status != "rejected":
        return "", ""
    last = next((m for m in reversed(ws.sessions.messages(session_id)) if isinstance(m.message, AssistantMessage)),
                None)
    refused = refused_call(last.parts) if last is not None else None
    note = ended_note(status, refused)
    return ended_html(status, refused), f"■ {note}" if note else ""


def _session(ws: Workspace, session_id: str, since: str | None, by_call: dict[str, list[Record]],
             loose: dict[str, list[Record]], totals: _Totals, depth: int,
             prompts: bool = False, ending: bool = True) -> tuple[str, list[str]]:
    html: list[str] = []
    text: list[str] = []
    pad = "    " * depth
    users: dict[str, bool] = {}
    switches: dict[str, str] = {}
    """Synthetic user messages that hand the session to another agent, with that agent."""
    # Only the run's own messages are read (a long session must not make each cell slower), and the agent
    # that answered before them, to tell a hand-over from a plain synthetic message.
    agent = ws.sessions.current_agent(session_id, before=since) if since is not None else None
    entries = ws.sessions.messages(session_id, since)
    for index, entry in enumerate(entries):
        message = entry.message
        if isinstance(message, UserMessage):
            if message.synthetic and agent is not None and message.agent != agent:
                switches[message.id] = message.agent
            agent = message.agent
        if since is not None and message.id < since:
            continue
        if isinstance(message, UserMessage):
            users[message.id] = message.synthetic
        elif isinstance(message, AssistantMessage):
            totals.tokens += message.tokens.total
            totals.cost += message.cost
            if depth == 0 or not totals.agent:
                totals.agent, totals.model = message.agent, message.model
        for part in entry.parts:
            _part(ws, part, users, since, by_call, loose, totals, depth, html, text, prompts, switches)
        last = index == len(entries) - 1
        if isinstance(message, AssistantMessage) and message.error is not None and (ending or not last):
            # After the message's parts: a stop or an error ends the message, it does not head it.
            if message.error.kind == "aborted":
                html.append(f'<div class="ocnb-stopped" style="color:{COLORS["error"]}">■ stopped</div>')
                text.append(f"{pad}(stopped)")
            else:
                html.append(error_html(message.error.message))
                text.append(f"{pad}error: {message.error.message}")
    for record in loose.get(session_id, ()):
        html.append(record.html)
        text.append(pad + record.text)
    return "".join(html), text


def _part(ws: Workspace, part: Any, users: dict[str, bool], since: str | None, by_call: dict[str, list[Record]],
          loose: dict[str, list[Record]], totals: _Totals, depth: int, html: list[str], text: list[str],
          prompts: bool = False, switches: dict[str, str] | None = None) -> None:
    pad = "    " * depth
    if isinstance(part, TextPart):
        if part.message_id in users:
            if users[part.message_id] or part.synthetic:
                # Written for the model: the person reads only who takes over, or what was attached.
                line = synthetic_line(part.text, (switches or {}).get(part.message_id))
                if line:
                    html.append(synthetic_html(part.text, (switches or {}).get(part.message_id)))
                    text.append(f"{pad}⇄ {line}")
            elif depth > 0 or prompts:
                who = "task" if depth > 0 else "you"
                html.append(user_html(part.text, who))
                text.append(f"{pad}{who}: {part.text.strip()}")
            return
        if part.text.strip():
            html.append(text_html(part))
            text.append("\n".join(pad + line for line in part.text.strip().splitlines()))
    elif isinstance(part, ReasoningPart) and part.text.strip():
        html.append(reasoning_html(part))
    elif isinstance(part, ToolPart):
        html.append(tool_card_html(part))
        text.append("\n".join(pad + line for line in tool_card_text(part).splitlines()))
        for record in by_call.get(part.call_id, ()):
            html.append(record.html)
            text.append(pad + "  " + record.text)
        metadata = getattr(part.state, "metadata", {}) or {}
        child_id = metadata.get("session_id") if part.tool == "task" else None
        if child_id and depth < MAX_DEPTH:
            child_totals = _Totals()
            child_html, child_text = _session(ws, child_id, None, by_call, loose, child_totals, depth + 1)
            totals.tokens += child_totals.tokens
            totals.cost += child_totals.cost
            title = child_title(*task_heading(part), metadata.get("tools", []), task_state(part))
            html.append(f'<details class="ocnb-child" style="margin:2px 0 2px 12px"><summary>{escape(title)}'
                        f'</summary><div style="margin-left:12px">{child_html}</div></details>')
            text.append(f"{pad}  ┌ {title}")
            text.extend(child_text)
            text.append(f"{pad}  └")
