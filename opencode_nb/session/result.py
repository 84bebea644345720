"""What `await ws.prompt(...)` gives a script: the answer at hand, not a message id to look parts up by."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .models import AssistantMessage, MessageError, MessageWithParts, Part, TextPart, Tokens, UserMessage


@dataclass(frozen=True)
class UnattendedDecision:
    """An ask that nobody was there to answer, decided by the unattended policy instead."""

    kind: Literal["permission", "question"]
    session_id: str
    subject: str
    """What was asked: `bash rm -rf build`, or the question's text."""
    outcome: str
    """allowed, refused, answered or dismissed."""
    reason: str


@dataclass(frozen=True)
class PromptResult:
    session_id: str
    message: AssistantMessage | None
    """The final assistant message of the run (None when nothing was generated)."""
    parts: list[Part] = field(default_factory=list)
    """The final message's parts: its text, reasoning and tool calls."""
    tokens: Tokens = field(default_factory=Tokens)
    """Every answer of this run, added up (tool-call steps included)."""
    cost: float = 0.0
    """In dollars, for every answer of this run."""
    unattended: list[UnattendedDecision] = field(default_factory=list)
    """Asks that nobody answered and the unattended policy decided: a script that sees a refusal here can
    rerun with `on_ask`, or with a policy that allows what it needs."""

    @property
    def text(self) -> str:
        """The answer: the final message's text, as the person would read it."""
        return "\n\n".join(p.text for p in self.parts if isinstance(p, TextPart) and not p.synthetic and p.text)

    @property
    def error(self) -> MessageError | None:
        return self.message.error if self.message is not None else None

    @property
    def finish(self) -> str | None:
        return self.message.finish if self.message is not None else None

    @property
    def agent(self) -> str | None:
        return self.message.agent if self.message is not None else None

    @property
    def model(self) -> str | None:
        return self.message.model if self.message is not None else None

    @property
    def summary(self) -> bool:
        return self.message.summary if self.message is not None else False

    @classmethod
    def of_run(cls, session_id: str, final: AssistantMessage | None, answers: list[MessageWithParts],
               unattended: list[UnattendedDecision]) -> PromptResult:
        """The result of a run that wrote `answers` (its messages after the prompt) and ended with `final`."""
        tokens = Tokens()
        cost = 0.0
        parts: list[Part] = []
        for item in answers:
            message = item.message
            if isinstance(message, UserMessage):
                continue
            tokens = tokens + message.tokens
            cost += message.cost
            if final is not None and message.id == final.id:
                parts = list(item.parts)
        return cls(session_id, final, parts, tokens, cost, list(unattended))
