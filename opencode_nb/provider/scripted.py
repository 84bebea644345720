"""An offline provider that replays a script, or asks a function for each turn.

It is how the demo and the tests run with no network, and it is just another provider: the loop
cannot tell it from a real one. Configured with no script, it is the built-in offline demo model
(`scripted/demo`, in `builtin/`). Title requests are answered from the prompt itself and never consume
a turn, so a script lists exactly the turns of the conversation.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import id as ids
from ..config.yaml_lines import load_yaml
from ..errors import ConfigError, ProviderError
from .events import (
    FinishReason,
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
    """A failure to raise instead of finishing; kind and retryable follow from the status unless given."""

    model_config = ConfigDict(extra="forbid")
    message: str = "scripted failure"
    status: int | None = 500
    retryable: bool | None = None
    retry_after_s: float | None = None
    kind: str | None = None

    def raise_it(self) -> NoReturn:
        kind = self.kind or _KINDS.get(self.status or 0) or ("server" if (self.status or 0) >= 500 else "provider")
        retryable = self.retryable if self.retryable is not None else kind in _RETRYABLE
        raise ProviderError(self.message, retryable=retryable, status=self.status, retry_after_s=self.retry_after_s,
                            kind=kind)


_KINDS = {429: "rate_limit", 529: "overloaded", 401: "auth", 403: "auth", 400: "bad_request", 413: "context_overflow"}
_RETRYABLE = {"rate_limit", "overloaded", "server", "connection"}


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = ""
    reasoning: str = ""
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    finish: FinishReason | None = None
    """Default: `tool-calls` when the turn calls tools, else `stop`."""
    delay: float = Field(0.0, ge=0)
    """Seconds to wait before each chunk."""
    usage: Usage | None = None
    """Reported usage; estimated at 4 characters a token when absent."""
    error: ScriptedError | None = None
    """Fail this request (after streaming the text, if any) instead of finishing it."""


Respond = Callable[[LLMRequest], Any]
"""`respond(request)` returns (or awaits to) the next turn: a `Turn`, a mapping, or just the text."""


class Scripted:
    """Replays `turns` in order, or asks `respond` for each turn; `requests` records what it was asked."""

    def __init__(self, turns: Sequence[Turn | dict[str, Any]] | None = None, respond: Respond | None = None) -> None:
        self.turns = [t if isinstance(t, Turn) else Turn.model_validate(t) for t in turns or []]
        self.respond = respond
        self.requests: list[LLMRequest] = []
        """Every request received, in order (titles included), for tests to inspect."""
        self._sizes: dict[int, tuple[object, int]] = {}

    @classmethod
    def from_config(cls, script: list[dict[str, Any]] | str | None, base_dir: Path | None = None) -> Scripted:
        """From `provider.scripted.script`: a list of turns, or a YAML/JSON file of them (relative to `base_dir`).

        With no script at all it is the built-in offline demo, so `scripted/demo` works in any notebook,
        script or terminal without configuration (an empty list is a script with no turns).
        """
        key = "provider.scripted.script"
        if script is None:
            from .builtin import BuiltinDemo

            return cls(respond=BuiltinDemo())
        source: Path | None = None
        if isinstance(script, str):
            source = Path(script).expanduser()
            if not source.is_absolute() and base_dir is not None:
                source = base_dir / source
            try:
                text = source.read_text(encoding="utf-8")
                script = json.loads(text) if source.suffix == ".json" else load_yaml(text, source)
            except OSError as exc:
                raise ConfigError(source, key=key, hint=f"cannot be read: {exc.strerror}") from None
            except (ValueError, yaml.YAMLError) as exc:
                raise ConfigError(source, key=key, hint=f"is not valid YAML/JSON: {exc}") from None
            except RecursionError:
                raise ConfigError(source, key=key, hint="refused: it is nested too deeply to read") from None
        if script is not None and not isinstance(script, list):
            raise ConfigError(source, key=key, hint="must be a list of turns, e.g. [{text: hello}]")
        turns = []
        for i, turn in enumerate(script or []):
            try:
                turns.append(Turn.model_validate(turn))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "turn"
                raise ConfigError(source, key=f"{key}[{i}].{where}", hint=f"{first['msg']} (turn keys: "
                                  f"{', '.join(Turn.model_fields)})") from None
        return cls(turns)

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
            turn.error.raise_it()
        for call in turn.tool_calls:
            await _pause(turn.delay)
            call_id = call.id or ids.ascending("tool")
            yield ToolCallStart(id=call_id, name=call.name)
            raw = call.input if isinstance(call.input, str) else json.dumps(call.input)
            yield parse_tool_input(call.name, call_id, raw)
        finish = turn.finish or ("tool-calls" if turn.tool_calls else "stop")
        yield StepFinish(reason=finish, usage=self._usage(turn, request))

    def _usage(self, turn: Turn, request: LLMRequest) -> Usage:
        """The turn's usage, or an estimate (4 characters a token) of what a real model would report."""
        if turn.usage is not None:
            return turn.usage
        size = sum(len(s) for s in request.system)
        if len(self._sizes) > 10_000:
            self._sizes.clear()
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
            if isinstance(answer, str):
                answer = {"text": answer}
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
