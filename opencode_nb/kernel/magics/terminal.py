"""Terminal IPython: the same magics, shown as plain text, with approvals asked through `input()`.

There are no widgets in a terminal, so the session is printed as it happens (the CLI's text transcript)
and each ask is a prompt on the terminal. `input()` runs on a worker thread so the agent's other work
(parallel tools, subagents) goes on while the person thinks.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from ...errors import NotFoundError

if TYPE_CHECKING:
    from ...views.text import TextTranscript
    from ...workspace import Workspace

ANSWERS = {"o": "once", "once": "once", "y": "once", "yes": "once", "a": "always", "always": "always",
           "r": "reject", "n": "reject", "no": "reject", "reject": "reject", "": "reject"}
"""What the person may type; an empty line refuses, so a stray Enter never approves anything."""
GONE = "\x00answered meanwhile"
"""What `ask` returns for a request that was answered while it waited for the terminal."""


def wire(ws: Workspace, read: Callable[[str], str] = input, out: TextIO | None = None) -> Callable[[], None]:
    """Print the session live and ask the person on the terminal; returns a function that undoes it."""
    from ...permission.events import PermissionAsked
    from ...question.events import QuestionAsked
    from ...views.text import TextTranscript

    transcript = TextTranscript(ws.bus, out)
    asks = _TerminalAsks(ws, read, transcript)
    offs = [
        ws.bus.subscribe(PermissionAsked,
                         lambda e: asks.permission(e.request) if _waiting(ws.permissions, e) else None),
        ws.bus.subscribe(QuestionAsked, lambda e: asks.question(e.request) if _waiting(ws.questions, e) else None),
    ]

    def off() -> None:
        transcript.close()
        for unsubscribe in offs:
            unsubscribe()

    return off


class _TerminalAsks:
    """Puts a workspace's permission requests and questions to the person, one at a time."""

    def __init__(self, ws: Workspace, read: Callable[[str], str], transcript: TextTranscript) -> None:
        self.ws = ws
        self.read = read
        self.transcript = transcript
        self.turn: asyncio.Lock | None = None
        """Parallel tools and subagents may ask at once; the terminal asks one thing at a time (made on the
        loop that first asks)."""

    async def ask(self, prompt: str, service: Any, request_id: str) -> str | None:
        """The person's answer; `GONE` when the request was answered while it waited for its turn (another
        ask's "always", Stop), so it is never put to the person after the fact."""
        if self.turn is None:
            self.turn = asyncio.Lock()
        async with self.turn:
            if not _pending(service, request_id):
                return GONE
            try:
                return (await asyncio.to_thread(self.read, prompt)).strip()
            except EOFError:
                return None  # no more input (a closed or piped terminal): nobody can answer

    async def permission(self, request: Any) -> None:
        from ...views.asks import always_note, shown_patterns

        ws = self.ws
        patterns = ", ".join(shown_patterns(request))
        lines = [f"\n? {request.agent} asks for {request.permission}" + (f": {patterns}" if patterns else "")]
        if request.metadata.get("diff"):
            lines.append(str(request.metadata["diff"]))
        lines.append(f"  [o]nce · [a]lways ({always_note(request)}) · [r]eject · or type why not: ")
        answer = await self.ask("\n".join(lines), ws.permissions, request.id)
        if answer is GONE:
            return
        reply = "reject" if answer is None else ANSWERS.get(answer.lower())
        if answer is not None:
            self.transcript.answered_here(request.id)  # the prompt and the typed answer are on the screen
        with contextlib.suppress(NotFoundError):  # answered meanwhile (Stop, another ask's "always")
            if reply is None:
                ws.permissions.reply(request.id, "reject", answer)
            else:
                ws.permissions.reply(request.id, reply)  # type: ignore[arg-type]

    async def question(self, request: Any) -> None:
        ws = self.ws
        answers = []
        for question in request.questions:
            options = " · ".join(f"[{i + 1}] {o.label}" for i, o in enumerate(question.options))
            answer = await self.ask(f"\n? {question.question}\n  {options}\n  > ", ws.questions, request.id)
            if answer is GONE:
                return
            if answer is None:
                with contextlib.suppress(NotFoundError):
                    ws.questions.reject(request.id, "nobody answered on the terminal")
                return
            labels = [question.options[int(n) - 1].label for n in answer.replace(",", " ").split()
                      if n.isdigit() and 0 < int(n) <= len(question.options)]
            answers.append(labels or ([answer] if answer else []))
        self.transcript.answered_here(request.id)
        with contextlib.suppress(NotFoundError):
            ws.questions.reply(request.id, answers)


def _waiting(service: Any, event: Any) -> bool:
    """Still unanswered: a policy may have answered it as it was published."""
    return _pending(service, event.request.id)


def _pending(service: Any, request_id: str) -> bool:
    return any(r.id == request_id for r in service.pending())
