"""What has happened in a session, read back from the request the loop sends.

The built-in demo keeps no state of its own: every answer is derived from the request's messages, which
are the session's own history. A new session therefore starts the scenario from its beginning, two
sessions never share a cursor, and a rejected edit or a failing check is seen exactly as it happened.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..request import LLMRequest, TextBlock, ToolCallBlock, ToolResultBlock

REMINDER = "<system-reminder>"


@dataclass(frozen=True)
class Call:
    """One tool call the model made, with its result once the loop has one."""

    name: str
    input: dict[str, Any]
    output: str | None = None
    is_error: bool = False

    @property
    def ok(self) -> bool:
        return self.output is not None and not self.is_error


@dataclass(frozen=True)
class Since:
    """The session from one user prompt on: the prompt, then each step the model took and its tool calls."""

    prompt: str
    steps: list[list[Call]]
    """One entry per assistant message after the prompt, in order."""

    @property
    def calls(self) -> list[Call]:
        return [call for step in self.steps for call in step]

    def last(self, name: str) -> Call | None:
        return next((c for c in reversed(self.calls) if c.name == name), None)

    @property
    def answered(self) -> bool:
        """The model already ended its turn with words only, so the loop asks again only because the person
        wrote something since: the scenario's last move is behind it."""
        return bool(self.steps) and not self.steps[-1]


def prompt_texts(request: LLMRequest) -> list[tuple[int, str]]:
    """Each user message's text with its index; reminders the loop appends are not the person's words."""
    out = []
    for index, message in enumerate(request.messages):
        if message.role != "user":
            continue
        texts = [b.text for b in message.content if isinstance(b, TextBlock) and not b.text.startswith(REMINDER)]
        if texts:
            out.append((index, "\n".join(texts)))
    return out


def since(request: LLMRequest, matches: Callable[[str], bool]) -> Since | None:
    """The session from the newest user prompt that `matches`, or None when no prompt does."""
    prompts = prompt_texts(request)
    found = next(((i, text) for i, text in reversed(prompts) if matches(text)), None)
    if found is None:
        return None
    start, text = found
    results = {b.call_id: b for m in request.messages[start + 1:] for b in m.content
               if isinstance(b, ToolResultBlock)}
    steps = []
    for message in request.messages[start + 1:]:
        if message.role != "assistant":
            continue
        step = []
        for block in message.content:
            if isinstance(block, ToolCallBlock):
                result = results.get(block.id)
                step.append(Call(block.name, block.input, result.output if result else None,
                                 bool(result and result.is_error)))
        steps.append(step)
    return Since(prompt=text, steps=steps)


def last_turn(request: LLMRequest) -> tuple[list[str], list[ToolResultBlock]]:
    """The texts of the newest user turn, and the tool results that came after it. Reminders, which the loop
    appends to every request as a user message of their own, are not a turn."""
    for index in range(len(request.messages) - 1, -1, -1):
        message = request.messages[index]
        texts = [b.text for b in message.content if isinstance(b, TextBlock)]
        if message.role == "user" and texts and not all(t.startswith(REMINDER) for t in texts):
            results = [b for m in request.messages[index + 1:] for b in m.content if isinstance(b, ToolResultBlock)]
            return texts, results
    return [], []


TASK_ID = re.compile(r"\s*\(session_id: ses_\w+\)")
"""How a failed task's result names its child session for the model (to continue it): not for the person."""


def first_line(text: str, limit: int = 200) -> str:
    """The first non-blank line, without the child-session id a failed task's result carries for the model."""
    line = next((ln.strip() for ln in TASK_ID.sub("", text).splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[:limit - 1] + "…"


def words(pattern: str) -> Callable[[str], bool]:
    """A prompt matcher: any of the words, whole, in any case."""
    compiled = re.compile(pattern, re.IGNORECASE)
    return lambda text: compiled.search(text) is not None
