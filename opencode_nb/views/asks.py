"""The permission and question prompts as a person reads them: what is asked, in words where the pattern
is a mode, and the one line each collapses to once answered (live, in the transcript and in the terminal)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..permission.events import PermissionRequest, Reply
from ..permission.named import NAMED
from ..question.events import QuestionRequest
from .colors import HUES, MUTED
from .markdown import escape
from .render import BOX, MONO, PRE, clip, code_html, diff_html, icon_html

_KEEP_LINES = ' style="white-space:pre-wrap"'
"""A shell line of several lines (a here-document) keeps them in its bullet."""
REPLY_WORDS: dict[str, str] = {"once": "allowed once", "always": "always allowed", "reject": "rejected"}


def shown_patterns(request: PermissionRequest, patterns: Sequence[str] | None = None) -> list[str]:
    """What an ask is for, in the person's words: each path as named from the folder they work in (the
    repository-relative pattern the rules match is `play/notes.md`, the person's file is `notes.md`), and a
    shell line as it was written, once (its patterns also hold the words as they run, `echo b` beside
    `echo b > b.txt`, for the rules). Without "*" (it says nothing about the call) and the permission's own
    name (a function offered as a tool asks for `query` with the pattern `query`).

    `patterns`, when given, are what "Always" grants: prefixes like `echo *`, shown as patterns."""
    if patterns is None and request.permission == "bash" and str(request.metadata.get("command") or "").strip():
        return [str(request.metadata["command"]).strip()]
    named = request.metadata.get(NAMED)
    names = named if isinstance(named, Mapping) else {}
    chosen = request.patterns if patterns is None else patterns
    said = [str(names.get(p, p)) for p in chosen if p not in ("*", request.permission)]
    return list(dict.fromkeys(said))


def asked_for_text(request: PermissionRequest) -> str:
    """What an ask is for, in one phrase with no word said twice: `bash git status`, `query`."""
    return " ".join([request.permission, ", ".join(shown_patterns(request))]).strip()


def always_note(request: PermissionRequest) -> str:
    """What "Always allow" would cover, in words a person can check before clicking."""
    if not request.always:
        return "only this call — calls like it are asked about every time"
    shown = shown_patterns(request, request.always)
    if not shown:
        return f"every {request.permission} call by {request.agent} in this session"
    patterns = pattern_words(request.permission, request.always) or ", ".join(shown)
    return f"{request.permission} {patterns} by {request.agent} in this session"


PATTERN_WORDS = {("python", "live"): "run in your namespace",
                 ("python", "sandbox"): "run in a sandbox, on copies of your variables"}
"""Patterns that are modes rather than things a person would recognise, said in words."""


def pattern_words(permission: str, patterns: Sequence[str]) -> str:
    """The patterns of an ask in words when each has some (python's modes), else ""."""
    said = [PATTERN_WORDS.get((permission, p)) for p in patterns]
    return ", ".join(w for w in said if w) if said and all(said) else ""


def cells_html(cells: Sequence[Any]) -> str:
    """Notebook cells about to run, each under its id: the sources a person approves."""
    out = []
    for cell in cells:
        if not isinstance(cell, Mapping):
            continue
        head = f'<div style="{MONO};color:{MUTED}">[{escape(str(cell.get("id", "?")))}]</div>'
        source = str(cell.get("source", ""))
        body = code_html(source) if cell.get("cell_type", "code") == "code" else (
            f'<pre style="{PRE}">{escape(clip(source))}</pre>')
        out.append(head + body)
    return "".join(out)


def permission_html(request: PermissionRequest) -> str:
    """The question part of a permission prompt (the buttons are widgets beside it)."""
    worded = pattern_words(request.permission, request.patterns)
    listed = "".join(f"<li><code{_KEEP_LINES if chr(10) in p else ''}>{escape(p)}</code></li>"
                     for p in shown_patterns(request))
    patterns = f'<ul style="margin:2px 0">{listed}</ul>' if listed else ""
    meta = request.metadata
    extra = ""
    if meta.get("diff"):
        extra = diff_html(str(meta["diff"]))
    elif isinstance(meta.get("cells"), list):
        extra = cells_html(meta["cells"])
    elif meta.get("code"):
        extra = code_html(str(meta["code"]))
    elif meta.get("command") and request.permission != "bash" and meta.get("command") not in request.patterns:
        extra = f'<pre style="{PRE}">{escape(str(meta["command"]))}</pre>'
    if meta.get("where"):
        extra = f'<div style="margin:2px 0">{escape(str(meta["where"]))}</div>' + extra
    return (f'<div class="ocnb-ask" style="{BOX.format(color=HUES["warning"])}">'
            f"{icon_html('lock')}<b>{escape(request.agent)}</b> asks for <b>{escape(request.permission)}</b>"
            + (f": {escape(worded)}" if worded else patterns) + f"{extra}</div>")


def permission_record_html(request: PermissionRequest, reply: Reply, *, message: str | None = None,
                           reason: str | None = None, by: str | None = None) -> str:
    """The one line a prompt collapses to once it has been answered (and by whom, where a page said)."""
    icon = "✓" if reply != "reject" else "✗"
    who = f" — {escape(reason)}" if reason else ""
    said = f": “{escape(message)}”" if message else ""
    person = f" by {escape(by)}" if by else ""
    patterns = ", ".join(shown_patterns(request))
    code = f" <code>{escape(patterns[:200])}</code>" if patterns else ""
    return (f'<div class="ocnb-ask-record" style="margin:2px 0;color:{MUTED}">{icon} {escape(request.agent)} · '
            f"{escape(request.permission)}{code} — {REPLY_WORDS[reply]}{person}{said}{who}</div>")


def permission_record_text(request: PermissionRequest, reply: Reply, *, message: str | None = None,
                           reason: str | None = None, by: str | None = None) -> str:
    said = f': "{message}"' if message else ""
    why = f" ({reason})" if reason else ""
    person = f" by {by}" if by else ""
    return f"? {request.agent} asked for {asked_for_text(request)}: {REPLY_WORDS[reply]}{person}{said}{why}"


def _answered(request: QuestionRequest, answers: Sequence[Sequence[str]] | None, none: str) -> list[tuple[str, str]]:
    """Each question with its answer in words (`none` where it has none)."""
    return [(q.question, ", ".join(answers[i]) if answers is not None and i < len(answers) and answers[i] else none)
            for i, q in enumerate(request.questions)]


def question_record_html(request: QuestionRequest, answers: Sequence[Sequence[str]] | None,
                         reason: str | None = None) -> str:
    mark = icon_html("question-circle")
    rows = [f"{mark}{escape(q)} → <b>{escape(a)}</b>" for q, a in _answered(request, answers, "—")]
    if answers is None:
        rows.append(f"<i>dismissed{(' — ' + escape(reason)) if reason else ''}</i>")
    elif reason:
        rows.append(f"<i>{escape(reason)}</i>")
    return (f'<div class="ocnb-question-record" style="margin:2px 0;color:{MUTED}">' + "<br/>".join(rows)
            + "</div>")


def question_record_text(request: QuestionRequest, answers: Sequence[Sequence[str]] | None,
                         reason: str | None = None) -> str:
    rows = [f"? {q} -> {a}" for q, a in _answered(request, answers, "-")]
    if answers is None:
        rows.append(f"  dismissed{(' (' + reason + ')') if reason else ''}")
    elif reason:
        rows.append(f"  ({reason})")
    return "\n".join(rows)
