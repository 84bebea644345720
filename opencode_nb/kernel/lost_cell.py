"""What a run in flight says when the page that reconnected has no cell for it.

A page reloaded before the notebook was saved loads the notebook as it was last saved, so the cell a running
prompt came from may not be in it. Its asks (an approval, a question) would then wait where nobody sees them
while the kernel stays busy. `prompt_run.PromptRun` re-creates the run's card in a new cell at the end of the
notebook; this module writes that cell's first lines and the notification that points at it, naming what the
run waits for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..workspace import Workspace

NOTICE_CHARS = 140
"""JupyterLab cuts a notification's text after this many characters: what matters must fit before it."""


def prompt_title(prompt: str, limit: int = 60) -> str:
    """The prompt's first non-empty line, cut to a length a heading or a notification can hold."""
    line = next((stripped for raw in prompt.splitlines() if (stripped := raw.strip())), "")
    return _cut(line, limit)


def cell_source(prompt: str) -> str:
    """The re-created cell's text: comments only, so running it by mistake does nothing but clear the card; short
    lines, since a code cell does not wrap them."""
    return (f"# Shown again after a reload: the run of the prompt “{prompt_title(prompt)}”.\n"
            "# The notebook was not saved, so the cell it ran in is gone.\n"
            "# Its card and its asks are below; `%agent show` prints it again.")


def waiting_asks(ws: Workspace, session_id: str) -> list[str]:
    """What the run's session (or one of its subagents) waits for a person to answer, one phrase each."""
    root = _root(ws, session_id)
    said: list[str] = []
    for permission in ws.permissions.pending():
        if _root(ws, permission.session_id) == root:
            pattern = next((p for p in permission.patterns if p and p != "*"), "")
            said.append(f"{permission.permission}: {pattern}" if pattern else permission.permission)
    for question in ws.questions.pending():
        if _root(ws, question.session_id) == root:
            said.extend(f"“{q.question}”" for q in question.questions[:1])
    return said


def notice(prompt: str, asks: list[str]) -> str:
    """The notification's text: which run, what it waits for, and that it is in a new cell; cut to fit a toast."""
    title = prompt_title(prompt, 40)
    where = ": it is shown again in a new cell."
    if not asks:
        return f"The run of “{title}” is still working{where}"
    head = f"The run of “{title}” waits for your answer ("
    room = NOTICE_CHARS - len(head) - len(")" + where)
    return f"{head}{_cut('; '.join(asks), max(room, 20))}){where}"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _root(ws: Workspace, session_id: str) -> str:
    try:
        return ws.sessions.root_of(session_id)
    except Exception:  # a session removed meanwhile: compare by its own id
        return session_id
