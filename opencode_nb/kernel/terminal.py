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

ANSWERS = {"o": "once", "once": "once", "y": "once", "yes": "once", "a": "always", "always": "always",
           "r": "reject", "n": "reject", "no": "reject", "reject": "reject", "": "reject"}
"""What the person may type; an empty line refuses, so a stray Enter never approves anything."""


def wire(ws: Workspace, read: Callable[[str], str] = input) -> Callable[[], None]:
    """Print the session live and ask the person on the terminal; returns a function that undoes it."""
    from ..permission import PermissionAsked
    from ..question import QuestionAsked
    from ..views.render import always_note
    from ..views.text import TextTranscript

    transcript = TextTranscript(ws.bus)
    turn: list[asyncio.Lock] = []
    """Parallel tools and subagents may ask at once; the terminal asks one thing at a time."""

    async def ask(prompt: str) -> str | None:
        if not turn:
            turn.append(asyncio.Lock())
        async with turn[0]:
            try:
                return (await asyncio.to_thread(read, prompt)).strip()
            except EOFError:
                return None  # no more input (a closed or piped terminal): nobody can answer

    async def ask_permission(request: Any) -> None:
        lines = [f"\n? {request.agent} asks for {request.permission}: {', '.join(request.patterns)}"]
        if request.metadata.get("diff"):
            lines.append(str(request.metadata["diff"]))
        lines.append(f"  [o]nce · [a]lways ({always_note(request)}) · [r]eject · or type why not: ")
        answer = await ask("\n".join(lines))
        reply = "reject" if answer is None else ANSWERS.get(answer.lower())
        with contextlib.suppress(NotFoundError):  # answered meanwhile (Stop, another ask's "always")
            if reply is None:
                ws.permissions.reply(request.id, "reject", answer)
            else:
                ws.permissions.reply(request.id, reply)  # type: ignore[arg-type]

    async def ask_question(request: Any) -> None:
        answers = []
        for question in request.questions:
            options = " · ".join(f"[{i + 1}] {o.label}" for i, o in enumerate(question.options))
            answer = await ask(f"\n? {question.question}\n  {options}\n  > ")
            if answer is None:
                with contextlib.suppress(NotFoundError):
                    ws.questions.reject(request.id, "nobody answered on the terminal")
                return
            labels = [question.options[int(n) - 1].label for n in answer.replace(",", " ").split()
                      if n.isdigit() and 0 < int(n) <= len(question.options)]
            answers.append(labels or ([answer] if answer else []))
        with contextlib.suppress(NotFoundError):
            ws.questions.reply(request.id, answers)

    offs = [
        ws.bus.subscribe(PermissionAsked,
                         lambda e: ask_permission(e.request) if _waiting(ws.permissions, e) else None),
        ws.bus.subscribe(QuestionAsked, lambda e: ask_question(e.request) if _waiting(ws.questions, e) else None),
    ]

    def off() -> None:
        transcript.close()
        for unsubscribe in offs:
            unsubscribe()

    return off


def _waiting(service: Any, event: Any) -> bool:
    """Still unanswered: a policy may have answered it as it was published."""
    return any(r.id == event.request.id for r in service.pending())
