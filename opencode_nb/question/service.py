"""Putting questions to the person and waiting for their answers.

`ask` publishes `question.asked` and suspends the asking tool until `reply` or `reject` is called for its
request id, from any thread: a widget's click handler may run on another thread than the loop that asked,
so the pending table is guarded by a lock and the waiting future is always resolved on its own loop
(`call_soon_threadsafe`). `close` rejects whatever is still waiting, so nothing hangs when a workspace
shuts down. A run with nobody to answer (headless, CI) passes a `policy` that answers or declines.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from .. import id as ids
from ..bus import Bus
from ..errors import NotFoundError, PolicyRefusedError, RejectedError
from ..handoff import run_on
from ..permission.events import DecidedBy, ToolRef
from .events import QuestionAsked, QuestionInfo, QuestionReplied, QuestionRequest

Answers = list[list[str]]
"""One list per question: the chosen option labels, free text typed instead, or both."""

Policy = Callable[[QuestionRequest], "Answers | Literal[False] | None"]
"""Answers for runs with nobody to ask; False dismisses the questions; None means ask a person after all."""

DISMISSED = "The user dismissed this question without answering."
DISMISSED_BY_POLICY = ("Nobody is present to answer questions in this run (it runs unattended), so they were "
                       "dismissed. Go on with your best judgement and say what you assumed.")


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

    async def ask(self, session_id: str, questions: Sequence[QuestionInfo], agent: str = "",
                  tool: ToolRef | None = None) -> Answers:
        """Wait for the person's answers, one list of chosen labels (or free text) per question.

        Raises:
            RejectedError: the person dismissed the questions, or the service closed first (the loop stops).
            PolicyRefusedError: nobody is present and the policy dismissed them (the model carries on).
        """
        request = QuestionRequest(id=ids.ascending("question"), session_id=session_id, agent=agent,
                                  questions=list(questions), tool=tool)
        if self.policy is not None:
            answers = self.policy(request)
            if answers is False:
                self.bus.publish(QuestionAsked(request=request))
                self.bus.publish(QuestionReplied(session_id=session_id, request_id=request.id,
                                                 reason="dismissed by policy: nobody is present to answer",
                                                 decided_by="policy"))
                raise PolicyRefusedError(DISMISSED_BY_POLICY)
            if answers is not None:
                answers = normalize(request, answers)
                self.bus.publish(QuestionAsked(request=request))
                self.bus.publish(QuestionReplied(session_id=session_id, request_id=request.id, answers=answers,
                                                 reason="answered by policy: nobody is present to ask",
                                                 decided_by="policy"))
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
                self.bus.publish(QuestionReplied(session_id=session_id, request_id=request.id, reason="aborted",
                                                 decided_by="stop"))
            raise

    def reply(self, request_id: str, answers: Sequence[Sequence[str] | str]) -> None:
        """Answer a pending request; safe from any thread.

        Args:
            request_id: the id of the `question.asked` request.
            answers: per question, the chosen labels and/or free text; a bare string is one answer. Missing
                trailing answers count as unanswered.

        Raises:
            NotFoundError: no pending request has this id (already answered, dismissed, or never asked).
            ValueError: more answers than questions.
        """
        with self._lock:
            pending = self._pending.get(request_id)
            if pending is None:
                raise NotFoundError("question request", request_id, "it was already answered or dismissed")
            normalized = normalize(pending.request, answers)
            del self._pending[request_id]
        run_on(pending.loop, self._finish, pending, normalized, None, "person")

    def reject(self, request_id: str, reason: str | None = None) -> None:
        """Dismiss a pending request: the asking tool fails with `RejectedError`. Safe from any thread."""
        pending = self._take(request_id)
        if pending is None:
            raise NotFoundError("question request", request_id, "it was already answered or dismissed")
        run_on(pending.loop, self._finish, pending, None, reason or "dismissed", "person")

    def pending(self, session_id: str | None = None) -> list[QuestionRequest]:
        """Requests still waiting, oldest first; only `session_id`'s when given."""
        with self._lock:
            items = list(self._pending.values())
        return [p.request for p in items if session_id is None or p.request.session_id == session_id]

    def close(self) -> None:
        """Reject everything still waiting."""
        with self._lock:
            items = list(self._pending.values())
            self._pending.clear()
        for pending in items:
            run_on(pending.loop, self._finish, pending, None, "closed", "close")

    def _finish(self, pending: _Pending, answers: Answers | None, reason: str | None, decided_by: DecidedBy) -> None:
        request = pending.request
        self.bus.publish(QuestionReplied(session_id=request.session_id, request_id=request.id, answers=answers,
                                         reason=reason, decided_by=decided_by))
        if pending.future.done():
            return
        if answers is None:
            pending.future.set_exception(RejectedError(DISMISSED, summary="Dismissed by you"))
        else:
            pending.future.set_result(answers)

    def _take(self, request_id: str) -> _Pending | None:
        with self._lock:
            return self._pending.pop(request_id, None)


def normalize(request: QuestionRequest, answers: Sequence[Sequence[str] | str]) -> Answers:
    """One list of non-empty strings per question: a bare string is one answer, missing answers are empty."""
    if isinstance(answers, str):
        answers = [answers]
    if len(answers) > len(request.questions):
        raise ValueError(f"{len(answers)} answers for {len(request.questions)} question(s) in request "
                         f"{request.id}: give one list of answers per question.")
    out: Answers = []
    for answer in answers:
        items = [answer] if isinstance(answer, str) else list(answer)
        out.append([str(a).strip() for a in items if str(a).strip()])
    return out + [[] for _ in range(len(request.questions) - len(out))]


def unattended_answers(policy: str, request: QuestionRequest) -> Answers | Literal[False]:
    """What a run with nobody present answers: under the `allow` policy each question's first option (the
    agent offered it first), under any other policy nothing: the questions are dismissed."""
    if policy == "allow":
        return [[q.options[0].label] if q.options else [] for q in request.questions]
    return False
