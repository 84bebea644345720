"""OpenAI Chat Completions streams as the API sends them, for the wire server.

`openai_stream("Hi", calls=[{"id": "call_a", "name": "read", "args": '{"path": "a"}'}])` gives a role
chunk, reasoning (`reasoning_content`) and text deltas, tool calls opened by index and their arguments
in 6-character fragments interleaved across calls, a finish chunk, a usage chunk with no choices, and
`[DONE]`.
"""

from __future__ import annotations

from typing import Any

from .wire_server import Failure, Stream, pieces

BASE = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5"}


def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> tuple[None, dict[str, Any]]:
    return None, {**BASE, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}], "usage": None}


def openai_stream(
    text: str = "",
    calls: list[dict[str, Any]] | None = None,
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    reasoning: str = "",
    drop_after: int | None = None,
    reasoning_field: str = "reasoning_content",
    delay_s: float = 0.0,
) -> Stream:
    """calls: [{"id", "name", "args": raw JSON text}]. `usage=None` still sends the default usage chunk."""
    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events += [chunk({reasoning_field: p}) for p in pieces(reasoning, 6)]
    events += [chunk({"content": p}) for p in pieces(text, 5)]
    calls = calls or []
    for j, call in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": j, "id": call["id"], "type": "function",
                                             "function": {"name": call["name"], "arguments": ""}}]}))
    fragments = [pieces(c["args"], 6) for c in calls]
    for step in range(max((len(f) for f in fragments), default=0)):
        for j, parts in enumerate(fragments):
            if step < len(parts):
                events.append(chunk({"tool_calls": [{"index": j, "function": {"arguments": parts[step]}}]}))
    events.append(chunk({}, finish or ("tool_calls" if calls else "stop")))
    events.append((None, {**BASE, "choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 30,
                                                            "total_tokens": 150, **(usage or {})}}))
    events.append((None, "[DONE]"))
    return Stream(events, drop_after, delay_s)


def openai_error_chunk(kind: str = "server_error", message: str = "The server had an error") -> Stream:
    """A stream that starts answering, then sends `data: {"error": ...}` (HTTP status stays 200)."""
    return Stream([chunk({"role": "assistant", "content": ""}), chunk({"content": "Hel"}),
                   (None, {"error": {"message": message, "type": kind, "param": None, "code": None}})])


def openai_failure(status: int, kind: str, message: str = "failed", headers: dict[str, str] | None = None) -> Failure:
    return Failure(status, {"error": {"message": message, "type": kind, "param": None, "code": kind}}, headers or {})
