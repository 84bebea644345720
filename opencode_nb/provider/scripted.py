"""An offline provider that replays a script, or asks a function for each turn.

It is how the demo and the tests run with no network, and it is just another provider: the loop
cannot tell it from a real one. Title requests are answered from the prompt itself and never consume
a turn, so a script lists exactly the turns of the conversation.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from .. import id as ids
from ..errors import ConfigError, ProviderError
from .events import (
    ProviderEvent,
    ReasoningDelta,
    ReasoningEnd,
    StepFinish,
    TextDelta,
    ToolCallStart,
    Usage,
    parse_tool_input,
)
from .request import LLMRequest

CHUNK = 24
"""Characters per streamed text chunk, so views see real streaming."""


class ScriptedCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    input: dict[str, Any] | str = Field(default_factory=dict)
    """A mapping, or a raw string to play a model that writes malformed JSON."""
    id: str | None = None


class ScriptedError(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: str = "scripted failure"
    status: int | None = 500
    retryable: bool = True
    retry_after_s: float | None = None
    kind: str = "server"


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = ""
    reasoning: str = ""
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    finish: str | None = None
    delay: float = 0.0
    """Seconds to wait before each chunk."""
    usage: dict[str, int] | None = None
    error: ScriptedError | None = None
    """Fail this request (after streaming the text, if any) instead of finishing it."""


Respond = Callable[[LLMRequest], Any]


class Scripted:
    def __init__(self, turns: Sequence[Turn | dict[str, Any]] | None = None, respond: Respond | None = None) -> None:
        self.turns = [t if isinstance(t, Turn) else Turn.model_validate(t) for t in turns or []]
        self.respond = respond
        self.requests: list[LLMRequest] = []
        """Every request received, in order (titles included), for tests to inspect."""
        self._sizes: dict[int, tuple[object, int]] = {}

    @classmethod
    def from_config(cls, script: list[dict[str, Any]] | str | None, base_dir: Path | None = None) -> Scripted:
        if isinstance(script, str):
            path = Path(script).expanduser()
            if not path.is_absolute() and base_dir is not None:
                path = base_dir / path
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                hint = f"cannot be read: {exc.strerror}"
                raise ConfigError(path, key="provider.scripted.script", hint=hint) from None
            script = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        if script is not None and not isinstance(script, list):
            raise ConfigError(None, key="provider.scripted.script", hint="must be a list of turns")
        try:
            return cls(script or [])
        except Exception as exc:
            raise ConfigError(None, key="provider.scripted.script", hint=str(exc).splitlines()[0]) from None

    async def stream(self, request: LLMRequest) -> AsyncIterator[ProviderEvent]:
        self.requests.append(request)
        if request.purpose == "title":
            yield TextDelta(text=_title_from(request))
            yield StepFinish(reason="stop")
            return
        turn = await self._next(request)
        if turn.reasoning:
            for chunk in _chunks(turn.reasoning):
                await _pause(turn.delay)
                yield ReasoningDelta(text=chunk)
            yield ReasoningEnd(metadata={"scripted": True})
        for chunk in _chunks(turn.text):
            await _pause(turn.delay)
            yield TextDelta(text=chunk)
        if turn.error is not None:
            e = turn.error
            raise ProviderError(e.message, retryable=e.retryable, status=e.status, retry_after_s=e.retry_after_s,
                                kind=e.kind)
        for call in turn.tool_calls:
            await _pause(turn.delay)
            call_id = call.id or ids.ascending("tool")
            yield ToolCallStart(id=call_id, name=call.name)
            raw = call.input if isinstance(call.input, str) else json.dumps(call.input)
            yield parse_tool_input(call.name, call_id, raw)
        finish = turn.finish or ("tool-calls" if turn.tool_calls else "stop")
        yield StepFinish(reason=finish, usage=self._usage(turn, request))  # type: ignore[arg-type]

    def _usage(self, turn: Turn, request: LLMRequest) -> Usage:
        """The turn's usage, or an estimate (4 characters a token) of what a real model would report."""
        if turn.usage is not None:
            return Usage(**turn.usage)
        size = sum(len(s) for s in request.system)
        for message in request.messages:
            known = self._sizes.get(id(message))
            if known is None or known[0] is not message:
                known = (message, len(message.model_dump_json()))
                self._sizes[id(message)] = known
            size += known[1]
        out = len(turn.text) + len(turn.reasoning) + sum(len(json.dumps(c.input)) for c in turn.tool_calls)
        return Usage(input=int(size / 4 + 0.5), output=int(out / 4 + 0.5))

    async def _next(self, request: LLMRequest) -> Turn:
        if self.respond is not None:
            answer = self.respond(request)
            if inspect.isawaitable(answer):
                answer = await answer
            return answer if isinstance(answer, Turn) else Turn.model_validate(answer)
        if not self.turns:
            raise ProviderError("The scripted model has no more turns: add turns to the script (or a respond "
                                "function) for this request.", retryable=False, kind="bad_request")
        return self.turns.pop(0)


def _chunks(text: str) -> list[str]:
    return [text[i:i + CHUNK] for i in range(0, len(text), CHUNK)]


async def _pause(delay: float) -> None:
    if delay > 0:
        await asyncio.sleep(delay)


def _title_from(request: LLMRequest) -> str:
    for message in request.messages:
        for block in message.content:
            text = getattr(block, "text", "")
            if text.strip():
                title = ""
                for word in text.strip().splitlines()[0].split()[:8]:
                    if len(title) + len(word) + 1 > 50:
                        break
                    title = f"{title} {word}".strip()
                return title or text.strip()[:50]
    return "Scripted session"
