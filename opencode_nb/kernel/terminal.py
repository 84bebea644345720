"""Terminal IPython: the same magics, shown as plain text, with approvals asked through `input()`.

There are no widgets in a terminal, so the session is printed as it happens (the CLI's text transcript)
and each ask is a prompt on the terminal. `input()` runs on a worker thread so the agent's other work
(parallel tools, subagents) goes on while the person thinks.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import NotFoundError

if TYPE_CHECKING:
    from ..workspace import Workspace

ANSWERS = {"": "once", "o": "once", "once": "once", "y": "once", "yes": "once", "a": "always", "always": "always",
           "r": "reject", "n": "reject", "no": "reject", "reject": "reject"}


def wire(ws: Workspace, read: Callable[[str], str] = input) -> Callable[[], None]:
    """Print the session live and ask the person on the terminal; returns a function that undoes it."""
    from ..views.render import always_note
    from ..views.text import TextTranscript

    transcript = TextTranscript(ws.bus)

    async def ask_permission(request: Any) -> None:
        lines = [f"\n? {request.agent} asks for {request.permission}: {', '.join(request.patterns)}"]
        if request.metadata.get("diff"):
            lines.append(str(request.metadata["diff"]))
        lines.append(f"  [o]nce · [a]lways ({always_note(request)}) · [r]eject · or type why not: ")
        answer = (await asyncio.to_thread(read, "\n".join(lines))).strip()
        reply = ANSWERS.get(answer.lower())
        try:
            if reply is None:
                ws.permissions.reply(request.id, "reject", answer)
            else:
                ws.permissions.reply(request.id, reply)  # type: ignore[arg-type]
        except NotFoundError:
            pass

    async def ask_question(request: Any) -> None:
        answers = []
        for question in request.questions:
            options = " · ".join(f"[{i + 1}] {o.label}" for i, o in enumerate(question.options))
            answer = (await asyncio.to_thread(read, f"\n? {question.question}\n  {options}\n  > ")).strip()
            labels = [question.options[int(n) - 1].label for n in answer.replace(",", " ").split()
                      if n.isdigit() and 0 < int(n) <= len(question.options)]
            answers.append(labels or ([answer] if answer else []))
        with contextlib.suppress(NotFoundError):
            ws.questions.reply(request.id, answers)

    offs = [
        ws.bus.subscribe("permission.asked", lambda e: ask_permission(e.request) if _waiting(ws, e) else None),
        ws.bus.subscribe("question.asked", lambda e: ask_question(e.request) if _waiting_q(ws, e) else None),
    ]

    def off() -> None:
        transcript.close()
        for unsubscribe in offs:
            unsubscribe()

    return off


def _waiting(ws: Workspace, event: Any) -> bool:
    return any(r.id == event.request.id for r in ws.permissions.pending())


def _waiting_q(ws: Workspace, event: Any) -> bool:
    return any(r.id == event.request.id for r in ws.questions.pending())
