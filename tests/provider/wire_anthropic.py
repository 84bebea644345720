"""Anthropic Messages streams as the API sends them, for the wire server.

`anthropic_stream({"text": ...}, {"tool": "read", "id": "toolu_1", "json": '{"path": "a"}'}, stop="tool_use")`
gives message_start, a ping, one content block per argument (text in 5-character deltas, thinking in
7-character deltas then a signature, tool input JSON as "" then 7-character fragments), message_delta
and message_stop.
"""

from __future__ import annotations

from typing import Any

from .wire_server import Failure, Stream, pieces


def anthropic_stream(
    *blocks: dict[str, Any],
    stop: str = "end_turn",
    usage: dict[str, int] | None = None,
    delta_usage: dict[str, Any] | None = None,
    drop_after: int | None = None,
    delay_s: float = 0.0,
) -> Stream:
    """Blocks: {"text"} | {"thinking", "signature"} | {"redacted": data} | {"tool", "id", "json": raw text}.

    `usage` goes in message_start (output_tokens 1, as the API does), `delta_usage` in message_delta
    (default: 42 output tokens).
    """
    start_usage = {"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0,
                   "cache_read_input_tokens": 0, **(usage or {})}
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": start_usage}}),
        ("ping", {"type": "ping"}),
    ]
    for i, block in enumerate(blocks):
        events += _block(i, block)
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": delta_usage or {"output_tokens": 42}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return Stream(events, drop_after, delay_s)


def _block(i: int, block: dict[str, Any]) -> list[tuple[str | None, Any]]:
    def start(content_block: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return "content_block_start", {"type": "content_block_start", "index": i, "content_block": content_block}

    def delta(d: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return "content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}

    if "text" in block:
        out = [start({"type": "text", "text": ""})]
        out += [delta({"type": "text_delta", "text": p}) for p in pieces(block["text"], 5)]
    elif "thinking" in block:
        out = [start({"type": "thinking", "thinking": "", "signature": ""})]
        out += [delta({"type": "thinking_delta", "thinking": p}) for p in pieces(block["thinking"], 7)]
        out.append(delta({"type": "signature_delta", "signature": block["signature"]}))
    elif "redacted" in block:
        out = [start({"type": "redacted_thinking", "data": block["redacted"]})]
    else:
        out = [start({"type": "tool_use", "id": block["id"], "name": block["tool"], "input": {}})]
        out += [delta({"type": "input_json_delta", "partial_json": p}) for p in ["", *pieces(block["json"], 7)]]
    out.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    return out


def anthropic_error_event(kind: str = "overloaded_error", message: str = "Overloaded") -> Stream:
    """A stream that starts answering, then sends an `error` event (HTTP status stays 200)."""
    begun = anthropic_stream({"text": "Hel"})
    return Stream([*begun.events[:4], ("error", {"type": "error", "error": {"type": kind, "message": message}})])


def anthropic_failure(
    status: int, kind: str, message: str = "failed", headers: dict[str, str] | None = None
) -> Failure:
    return Failure(status, {"type": "error", "error": {"type": kind, "message": message}}, headers or {})
