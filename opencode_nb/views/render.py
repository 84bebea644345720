"""Pure rendering of session content to HTML and plain text.

The live widgets and the saved transcript show a part the same way because both call these functions;
they take stored models and return strings, so they are tested without a kernel. Styles are inline and
limited to what JupyterLab's sanitizer, GitHub and nbviewer keep (colours, borders, fonts, margins).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any

from ..errors import person_summary
from ..mcp.servers import PROMPT_NOTE_START
from ..session.models import ReasoningPart, TextPart, ToolPart
from ..tool.base import person_text
from ..tool.task import task_answer
from .colors import HUES, MUTED, tone
from .labels import tool_title
from .markdown import escape, markdown_block_html, markdown_html
from .shorten import shorten

ICONS = {
    "read": "book", "write": "file-text-o", "edit": "pencil", "bash": "terminal", "grep": "search",
    "glob": "files-o", "list": "folder-open-o", "webfetch": "globe", "todowrite": "check-square-o",
    "todoread": "check-square-o", "task": "sitemap", "question": "question-circle", "plan_enter": "map-o",
    "plan_exit": "map-o", "notebook_read": "book", "notebook_edit": "pencil-square-o", "notebook_run": "play",
}
"""Font Awesome 4 icon names: JupyterLab's widget manager loads the font; elsewhere (GitHub, nbviewer) the
icon is simply absent and the tool's name carries the meaning."""

OUTPUT_LINES = 400
"""Lines of a tool's output kept in a card; the rest is cut with a note (the model saw its own copy)."""
OUTPUT_CHARS = 40_000
TAIL_LINES = 12
"""Lines of a running command's output shown live."""

COLORS = {state: tone(hue) for state, hue in HUES.items()}
"""Text colour of each state."""
MONO = "font-family:var(--jp-code-font-family,monospace);font-size:12px"
BOX = "margin:2px 0;padding:3px 8px;border-left:3px solid {color};background:var(--jp-layout-color1,#fff)"
WRAP = "overflow-wrap:break-word;word-break:normal"
"""Text wraps between words, and inside a word only when the word alone is wider than the card. JupyterLab
styles output `pre` with `word-break: break-all`, which splits words anywhere ("nort h")."""
PRE = f"{MONO};white-space:pre-wrap;{WRAP};margin:4px 0;max-height:24em;overflow:auto"
TEXT_MARKS = {"pending": "·", "running": "▸", "completed": "✓", "error": "✗", "failed": "✗"}
"""The state of a call in one character, where there is no colour to say it."""
TEXT_OUTPUT_LINES = 6
"""Lines of a tool's output or error a plain-text card previews."""
TEXT_OUTPUT_CHARS = 160
"""Characters of each previewed line."""
SPINNER = '<i class="fa fa-spinner fa-spin" aria-hidden="true"></i> '
"""Font Awesome, which the widget manager loads for button icons; only live cards show a running state."""


def icon_html(name: str) -> str:
    return f'<i class="fa fa-{name}" aria-hidden="true"></i> '


def seconds(value: float) -> str:
    return f"{value:.1f}s" if value < 60 else f"{int(value // 60)}m{int(value % 60):02d}s"


def clip(text: str, lines: int = OUTPUT_LINES, chars: int = OUTPUT_CHARS) -> str:
    """`text` up to its `lines`-th line and `chars`-th character, with a note of what was left out.

    The note counts what a reader would have seen: whole lines when the cut falls between lines, else
    characters; the line break that ends the text is nobody's content, so it is never counted.
    """
    rows = text.splitlines(keepends=True)
    kept = "".join(rows[:lines])[:chars]
    rest = text[len(kept):]
    shown = kept.rstrip("\r\n")
    if not rest.strip():
        return shown
    if kept.endswith(("\n", "\r")):
        more = len(rest.splitlines())
        return f"{shown}\n… {more:,} more line{'s' * (more != 1)}"
    more = len(rest.rstrip("\r\n"))
    return f"{shown}\n… {more:,} more character{'s' * (more != 1)}"


def clip_tail(text: str, lines: int = OUTPUT_LINES, chars: int = OUTPUT_CHARS) -> str:
    """`text` from its last `lines` lines and `chars` characters, after a note of what was left out: where a
    command stopped is at the end of what it printed."""
    rows = text.rstrip("\r\n").splitlines()
    kept = "\n".join(rows[-lines:])[-chars:]
    earlier = len(rows) - len(kept.splitlines())
    return f"… {earlier:,} earlier line{'s' * (earlier != 1)}\n{kept}" if earlier > 0 else kept


def error_html(message: str) -> str:
    """A run's error as one line under its transcript, in the same red as an errored card."""
    return (f'<div class="ocnb-error" style="color:{COLORS["error"]};white-space:pre-wrap">✗ '
            f"{escape(message)}</div>")


# ---------------------------------------------------------------------------------------------- text


def text_html(part: TextPart) -> str:
    return f'<div class="ocnb-text">{markdown_block_html(part.text)}</div>'


MENTION = re.compile(r"The person mentioned @(\S+), a variable")
"""How the description of a variable the person named with `@` begins (session/mentions.py)."""


def synthetic_line(text: str, agent: str | None = None) -> str:
    """A note the system wrote for the model (a mode switch's instructions, a variable's description, a plan
    step's brief) as the person needs it: who answers from here (`agent`, for a switch), or what was attached.
    "" when there is nothing for the person: the note itself is the model's."""
    if agent:
        return f"@{agent} takes over"
    if text.startswith(PROMPT_NOTE_START):  # an MCP server this prompt needed could not start: why
        return text.removeprefix(PROMPT_NOTE_START).removesuffix(")")
    mention = MENTION.match(text.strip())
    return f"@{mention[1]}: its description was given to the agent" if mention else ""


def synthetic_html(text: str, agent: str | None = None) -> str:
    """The line of `synthetic_line`, set apart from the model's text ("" when it has none)."""
    line = synthetic_line(text, agent)
    if not line:
        return ""
    return (f'<div class="ocnb-synthetic" style="color:{COLORS["system"]};font-style:italic;margin:4px 0">'
            f"⇄ {escape(line)}</div>")


def user_html(text: str, who: str = "you") -> str:
    return (f'<div class="ocnb-user" style="margin:4px 0;padding:4px 8px;background:rgba(30,136,229,.08);'
            f'border-radius:4px"><b>{escape(who)}</b>: {escape(text.strip())}</div>')


def reasoning_html(part: ReasoningPart, *, open_: bool = False) -> str:
    state = "" if part.ended_at is not None else " …"
    return (f'<details class="ocnb-reasoning"{" open" if open_ else ""} style="color:{MUTED};margin:2px 0">'
            f"<summary>thinking{state}</summary>{markdown_html(part.text)}</details>")


# ---------------------------------------------------------------------------------------------- tools


def outcome(part: ToolPart) -> str:
    """The state a call is shown in: its status, except that a completed command that failed (a non-zero
    exit, a timeout) is "failed". The model still read its whole output as a normal result."""
    state = part.state
    if state.status == "completed" and failure_text(part):
        return "failed"
    return state.status


def failure_text(part: ToolPart) -> str:
    """How a completed command failed, in a few words ("exit 2", "timed out"), or "" if it did not."""
    metadata = getattr(part.state, "metadata", {}) or {}
    if metadata.get("timed_out"):
        return "timed out"
    code = metadata.get("exit")
    if not isinstance(code, int) or isinstance(code, bool) or code == 0:
        return ""
    return f"exit {code}" if code > 0 else f"killed by signal {-code}"  # a negative code is the signal's


def tool_status(part: ToolPart, now: float | None = None, *, waiting: bool = False) -> str:
    state = part.state
    now = time.time() if now is None else now
    if state.status == "pending":
        return "pending"
    if state.status == "running" and waiting:
        return "waiting for your answer"
    if state.status == "running":
        # Whole seconds: a running card then changes once a second, not on every flush.
        return f"running {int(max(0.0, now - state.started_at))}s"
    failure = failure_text(part)
    return " ".join(w for w in (TEXT_MARKS[outcome(part)], failure, duration_text(part)) if w)


def duration_text(part: ToolPart) -> str:
    """How long a finished call ran, as every view writes it (empty while it runs)."""
    state = part.state
    if state.status not in ("completed", "error"):
        return ""
    return seconds(max(0.0, state.ended_at - state.started_at))


def diff_html(diff: str) -> str:
    rows = []
    for line in clip(diff).splitlines():
        color = ""
        if line.startswith("+") and not line.startswith("+++"):
            color = "background:rgba(67,160,71,.15)"
        elif line.startswith("-") and not line.startswith("---"):
            color = "background:rgba(229,57,53,.15)"
        elif line.startswith("@@"):
            color = f"color:{COLORS['running']}"
        rows.append(f'<span style="{color}">{escape(line)}</span>' if color else escape(line))
    return f'<pre style="{PRE}">' + "\n".join(rows) + "</pre>"


def decide_lines(metadata: dict[str, Any]) -> list[str]:
    """The lines a person types to decide a proposed cell change (`notebook_edit` under review, no page to
    show it in place), in the order the tool gave them."""
    lines = metadata.get("decide")
    return [str(line) for line in lines] if isinstance(lines, list) else []


def decide_html(metadata: dict[str, Any]) -> str:
    lines = decide_lines(metadata)
    if not lines:
        return ""
    rows = "<br/>".join(f'<code style="{MONO}">{escape(line)}</code>' for line in lines)
    return f'<div class="ocnb-decide" style="margin:2px 0;{WRAP}">{rows}</div>'


def code_html(code: str, *, summary: str | None = None) -> str:
    """Python as the person reads it in a prompt or a card, highlighted in the theme's editor colours. With
    `summary`, folded under it."""
    from .highlight import python_html

    body = python_html(clip(code))
    pre = f'<pre class="ocnb-code" style="{PRE}">{body}</pre>'
    return f"<details><summary>{escape(summary)}</summary>{pre}</details>" if summary else pre


def confinement_html(metadata: Mapping[str, Any]) -> str:
    """How the OS confined a sandboxed python run, said where the person looks: on its card."""
    run = metadata.get("run")
    label = run.get("confinement") if isinstance(run, Mapping) else None
    if not isinstance(label, str) or not label:
        return ""
    confined = label.startswith("confined")
    mark, color = ("🔒", MUTED) if confined else ("⚠", COLORS["error"])
    return (f'<div class="ocnb-confinement{"" if confined else " ocnb-unconfined"}" '
            f'style="color:{color};font-size:0.9em">{mark} sandbox {escape(label)}</div>')


def sandbox_note_html(metadata: Mapping[str, Any]) -> str:
    """The once-per-session word that shell commands run unconfined: one line on the card, for the person."""
    note = metadata.get("sandbox_note")
    if not isinstance(note, str) or not note:
        return ""
    return (f'<div class="ocnb-sandbox-note" style="color:{COLORS["warning"]};font-size:0.9em">'
            f"⚠ {escape(note)}</div>")


def diagnostics_lines(metadata: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """What the checks after an edit found, for the person: a count with where and by whom, then each finding
    the model was shown; and, apart, what kept a checker from running. Both empty when nothing was checked."""
    found = metadata.get("diagnostics")
    if not isinstance(found, Mapping):
        return [], []
    count = found.get("count") or 0
    rows = [f for f in found.get("findings") or [] if isinstance(f, Mapping)]
    problems = []
    if count and rows:
        by = "/".join(str(c) for c in found.get("checkers") or []) or "checks"
        problems.append(f"{count} problem{'s' * (count != 1)} found by {by} in {found.get('where', 'the change')}, "
                        "sent to the agent")
        problems += [f"line {f.get('line')}:{f.get('column')} {f.get('code')} {f.get('message')}" for f in rows]
        if count > len(rows):
            problems.append(f"… and {count - len(rows)} more")
    return problems, [str(note) for note in found.get("notes") or []]


def diagnostics_html(metadata: Mapping[str, Any]) -> str:
    """`diagnostics_lines` on the card: the count and the first finding in a line, the rest folded under it,
    then the notes, muted."""
    problems, notes = diagnostics_lines(metadata)
    html = ""
    if problems:
        style = f'class="ocnb-diagnostics" style="color:{COLORS["warning"]};font-size:0.9em"'
        line = f"⚠ {escape(problems[0])}: {escape(problems[1])}"
        rest = "<br/>".join(escape(r) for r in problems[2:])
        html = f"<details {style}><summary>{line}</summary>{rest}</details>" if rest else f"<div {style}>{line}</div>"
    if notes:
        html += (f'<div class="ocnb-diagnostics-note" style="color:{MUTED};font-size:0.9em">'
                 f"{'<br/>'.join(escape(n) for n in notes)}</div>")
    return html


STOPPED_NOTE = "Stopped while it ran; the output above is what it printed until then."
"""What a stopped call's card says under its output (the model reads its own wording)."""
OUTPUT_WORDS = {"task": "answer", "plan_exit": "plan", "webfetch": "page"}
"""What a card calls a call's shown output, where "output" is not the word."""


def printed_output(part: ToolPart) -> str:
    """What a call that ended in an error had printed while it ran ("" for other calls)."""
    state = part.state
    output = state.metadata.get("output") if state.status == "error" else None
    return output if isinstance(output, str) and output.strip() else ""


def summary_text(part: ToolPart) -> str:
    """What happened, in the person's words, as the tool (or its error) put it; "" while it runs, and for a
    call whose tool gives none (its output is then shown as it is)."""
    state = part.state
    if state.status not in ("completed", "error"):
        return ""
    summary = state.metadata.get("summary")
    if isinstance(summary, str) and summary.strip():
        return summary.strip()
    return (person_summary(state.error) or "") if state.status == "error" else ""


def error_text(part: ToolPart) -> str:
    """An errored call's error as the person reads it: a stop is said as a stop, and an error written for the
    model (a refusal, what to call next) by its summary."""
    state = part.state
    assert state.status == "error"
    if state.metadata.get("interrupted"):
        return STOPPED_NOTE if printed_output(part) else "Stopped before it finished."
    return summary_text(part) or state.error


def shown_output(part: ToolPart) -> tuple[str, bool]:
    """What a completed call's card shows under its summary, and whether that is markdown.

    The tool says so in its result (`person_output`, `markdown`); the output the model read is shown only
    when the tool gave nothing else, less any note written for the model. A task's answer is markdown."""
    state = part.state
    if state.status != "completed":
        return "", False
    metadata = state.metadata
    if "person_output" not in metadata and part.tool in ("todowrite", "todoread"):
        return "", False  # the todo list shows them
    text = person_text(task_answer(state.output) if part.tool == "task" else state.output, metadata)
    return text, bool(metadata.get("markdown")) or part.tool == "task"


def summary_html(summary: str) -> str:
    lines = "<br/>".join(escape(line) for line in summary.splitlines())
    return f'<div class="ocnb-summary" style="margin:2px 0;{WRAP}">{lines}</div>'


def shown_html(part: ToolPart, *, open_: bool = False) -> str:
    """The output part of a completed card: folded, with its size; markdown rendered, else as printed."""
    text, markdown = shown_output(part)
    if not text.strip():
        return ""
    lines = text.rstrip("\n").count("\n") + 1
    word = OUTPUT_WORDS.get(part.tool, "output")
    body = markdown_block_html(clip(text)) if markdown else f'<pre style="{PRE}">{escape(clip(text))}</pre>'
    return (f'<details{" open" if open_ or markdown else ""}><summary>{word} ({lines} line{"s" * (lines != 1)})'
            f"</summary>{body}</details>")


def tool_card_html(part: ToolPart, now: float | None = None, *, open_: bool = False, waiting: bool = False) -> str:
    """The card of one tool call: what it is, its state, and what it produced for the person (never the
    sentences its result holds for the model)."""
    state = part.state
    shown = outcome(part)
    icon = icon_html(ICONS.get(part.tool, "wrench"))
    head = (f'<span class="ocnb-tool-head">{icon}<b>{escape(part.tool)}</b> '
            f'<span style="{MONO};{WRAP}">{escape(tool_title(part)[:200])}</span> '
            f'<span class="ocnb-tool-state" style="color:{COLORS[shown]}">'
            f"{SPINNER if state.status == 'running' and not waiting else ''}"
            f"{escape(tool_status(part, now, waiting=waiting))}</span></span>")
    body = ""
    metadata: dict[str, Any] = getattr(state, "metadata", {}) or {}
    if part.tool == "python" and isinstance(state.input.get("code"), str):
        body = code_html(state.input["code"], summary="code") + confinement_html(metadata)
    if state.status == "running" and metadata.get("output"):
        tail = "\n".join(str(metadata["output"]).splitlines()[-TAIL_LINES:])
        body += f'<pre class="ocnb-tail" style="{PRE}">{escape(tail)}</pre>'
    elif state.status == "completed":
        summary = summary_text(part)
        inner = (summary_html(summary) if summary else "") + body
        inner += diagnostics_html(metadata)
        if metadata.get("diff"):
            inner += diff_html(str(metadata["diff"]))
        inner += decide_html(metadata)
        inner += shown_html(part, open_=open_)
        for attachment in state.attachments:
            if attachment.mime.startswith("image/") and attachment.url.startswith("data:"):
                inner += f'<img src="{escape(attachment.url)}" style="max-width:100%;margin:4px 0"/>'
        body = inner
    elif state.status == "error":
        printed = printed_output(part)
        if printed:
            lines = printed.rstrip("\n").count("\n") + 1
            body += (f'<details open><summary>output so far ({lines} line{"s" * (lines != 1)})</summary>'
                     f'<pre class="ocnb-partial" style="{PRE}">{escape(clip_tail(printed))}</pre></details>')
        error = escape(clip(error_text(part)))
        body += (f'<div class="ocnb-error" style="color:{COLORS["error"]};{MONO};white-space:pre-wrap;{WRAP}">'
                 f"{error}</div>")
    style = BOX.format(color=HUES[shown])
    return f'<div class="ocnb-tool ocnb-{shown}" style="{style}">{head}{sandbox_note_html(metadata)}{body}</div>'


def tool_card_text(part: ToolPart, *, output_lines: int = TEXT_OUTPUT_LINES) -> str:
    """The card of one tool call as plain text: the HTML card's title, state and timing, its summary, then
    a preview of what it shows the person (the error, for a failed call).

    A task's answer has no preview: the child session shows it.
    """
    state = part.state
    line = f"{TEXT_MARKS[outcome(part)]} {part.tool} {tool_title(part)}".rstrip()
    if state.status in ("completed", "error"):
        line += f"  ({', '.join(w for w in (failure_text(part), duration_text(part)) if w)})"
    out = [line]
    note = (getattr(state, "metadata", None) or {}).get("sandbox_note")
    if isinstance(note, str) and note:
        out.append(f"    ! {note}")
    text = error_text(part) if state.status == "error" else ""
    printed = printed_output(part)
    if printed:  # the end of what it printed is where it stopped
        rows = printed.rstrip().splitlines()
        if len(rows) > output_lines:
            out.append(f"    … {len(rows) - output_lines} earlier lines")
        out += [f"    {shorten(row, TEXT_OUTPUT_CHARS)}" for row in rows[-output_lines:]]
    if state.status == "completed":
        summary = summary_text(part)
        out += [f"    {shorten(row, TEXT_OUTPUT_CHARS)}" for row in summary.splitlines()]
        problems, notes = diagnostics_lines(state.metadata)
        out += [f"    ! {shorten(row, TEXT_OUTPUT_CHARS)}" for row in [*problems[:4], *(f"({n})" for n in notes)]]
        out += [f"    {line}" for line in decide_lines(getattr(state, "metadata", None) or {})]
        text = shown_output(part)[0] if part.tool != "task" else ""
    if text.strip():
        rows = text.rstrip().splitlines()
        out += [f"    {shorten(row, TEXT_OUTPUT_CHARS)}" for row in rows[:output_lines]]
        if len(rows) > output_lines:
            out.append(f"    … {len(rows) - output_lines} more lines")
    return "\n".join(out)
