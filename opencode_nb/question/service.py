"""Putting questions to the person and waiting for their answers.

Works like the permission service: a pending table guarded by a lock so a reply may come from any
thread, and resolution handed to the loop the question was asked on.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import id as ids
from ..bus import Bus
from ..errors import NotFoundError, RejectedError
from .events import QuestionAsked, QuestionInfo, QuestionReplied, QuestionRequest

Answers = list[list[str]]
Policy = Callable[[QuestionRequest], Answers | None]
"""Answers for runs with nobody to ask (None: ask after all)."""


@dataclass
class _Pending:
    request: QuestionRequest
    future: asyncio.Future[Answers]
    loop: asyncio.AbstractEventLoop


class QuestionService:
    def __init__(self, bus: Bus, *, policy: Policy | None = None) -> None:
        self.bus = bus
        self.policy = policy
        self._pending: dict[str, _Pending] = {}
        self._lock = threading.Lock()

    async def ask(self, session_id: str, questions: list[QuestionInfo], agent: str = "") -> Answers:
        """The person's answers, one list of chosen labels (or free text) per question.

        Raises:
            RejectedError: the person dismissed the questions, or the workspace closed.
        """
        request = QuestionRequest(id=ids.ascending("question"), session_id=session_id, agent=agent,
                                  questions=list(questions))
        if self.policy is not None:
            answers = self.policy(request)
            if answers is not None:
                self.bus.publish(QuestionReplied(session_id=session_id, request_id=request.id, answers=answers,
                                                 reason="answered by policy: nobody is present to ask"))
                return answers
        loop = asyncio.get_running_loop()
        pending = _Pending(request, loop.create_future(), loop)
        with self._lock:
            self._pending[request.id] = pending
        self.bus.publish(QuestionAsked(request=request))
        try:
            return await pending.future
        except asyncio.CancelledError:
            if self._take(request.id) is not None:
                self.bus.publish(QuestionReplied(session_id=session_id, request_id=request.id, reason="aborted"))
            raise

    def reply(self, request_id: str, answers: Answers) -> None:
        """Answer a pending question set; safe from any thread."""
        pending = self._take(request_id)
        if pending is None:
            raise NotFoundError("question request", request_id)
        answers = [list(a) for a in answers]
        self._on_loop(pending, lambda: self._finish(pending, answers, None))

    def reject(self, request_id: str, reason: str | None = None) -> None:
        pending = self._take(request_id)
        if pending is None:
            raise NotFoundError("question request", request_id)
        self._on_loop(pending, lambda: self._finish(pending, None, reason or "dismissed"))

    def pending(self, session_id: str | None = None) -> list[QuestionRequest]:
        with self._lock:
            items = list(self._pending.values())
        return [p.request for p in items if session_id is None or p.request.session_id == session_id]

    def close(self) -> None:
        with self._lock:
            items = list(self._pending.values())
            self._pending.clear()
        for pending in items:
            self._on_loop(pending, lambda p=pending: self._finish(p, None, "closed"))

    def _finish(self, pending: _Pending, answers: Answers | None, reason: str | None) -> None:
        request = pending.request
        self.bus.publish(QuestionReplied(session_id=request.session_id, request_id=request.id, answers=answers,
                                         reason=reason))
        if pending.future.done():
            return
        if answers is None:
            pending.future.set_exception(RejectedError("The user dismissed the question without answering."))
        else:
            pending.future.set_result(answers)

    def _take(self, request_id: str) -> _Pending | None:
        with self._lock:
            return self._pending.pop(request_id, None)

    @staticmethod
    def _on_loop(pending: _Pending, fn: Callable[[], Any]) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is pending.loop:
            fn()
        elif not pending.loop.is_closed():
            pending.loop.call_soon_threadsafe(fn)
