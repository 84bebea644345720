"""A loopback HTTP server that speaks the Anthropic and OpenAI streaming wire formats.

Each test queues the responses the server should give, in order: a stream of server-sent events, an
HTTP error with headers, or a stream cut off mid-way. The server records every request it receives, so
tests can check what the real SDK put on the wire.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Stream:
    events: list[tuple[str | None, Any]]
    """(event name or None, data: dict or the raw string); OpenAI streams end with a raw "[DONE]"."""
    drop_after: int | None = None
    """Close the connection after this many events, without ending the response."""
    delay_s: float = 0.0
    """Pause before each event, to play a slow model."""


@dataclass
class Failure:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class WireServer:
    def __init__(self) -> None:
        self.responses: queue.Queue[Stream | Failure] = queue.Queue()
        self.received: list[Received] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                try:
                    response = server.responses.get_nowait()
                except queue.Empty:
                    response = Failure(500, {"error": {"type": "api_error", "message": "no response queued"}})
                if isinstance(response, Failure):
                    data = json.dumps(response.body).encode()
                    self.send_response(response.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in response.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for i, (name, data) in enumerate(response.events):
                    if response.delay_s:
                        time.sleep(response.delay_s)
                    if response.drop_after is not None and i >= response.drop_after:
                        self.wfile.flush()
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    payload = data if isinstance(data, str) else json.dumps(data)
                    text = (f"event: {name}\n" if name else "") + f"data: {payload}\n\n"
                    chunk = text.encode()
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def queue(self, *responses: Stream | Failure) -> None:
        for response in responses:
            self.responses.put(response)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# ---------------------------------------------------------------------------------------------- Anthropic


def anthropic_stream(*blocks: dict[str, Any], stop: str = "end_turn", usage: dict[str, int] | None = None,
                     drop_after: int | None = None) -> Stream:
    """Blocks: {"text": ...} | {"thinking": ..., "signature": ...} | {"tool": name, "id": ..., "json": raw}."""
    u = {"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
         **(usage or {})}
    events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": u}}), ("ping", {"type": "ping"})]
    for i, block in enumerate(blocks):
        if "text" in block:
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "text", "text": ""}}))
            for piece in _pieces(block["text"], 5):
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "text_delta", "text": piece}}))
        elif "thinking" in block:
            events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                "type": "thinking", "thinking": "", "signature": ""}}))
            for piece in _pieces(block["thinking"], 7):
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "thinking_delta", "thinking": piece}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "signature_delta",
                                                             "signature": block["signature"]}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["tool"], "input": {}}}))
            for piece in ["", *_pieces(block["json"], 7)]:
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "input_json_delta", "partial_json": piece}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": u.get("output_tokens_final", 42)}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return Stream(events, drop_after)


def anthropic_error_event(kind: str = "overloaded_error", message: str = "Overloaded") -> Stream:
    stream = anthropic_stream({"text": "Hel"})
    return Stream([*stream.events[:4], ("error", {"type": "error", "error": {"type": kind, "message": message}})])


def anthropic_failure(
    status: int, kind: str, message: str = "failed", headers: dict[str, str] | None = None
) -> Failure:
    return Failure(status, {"type": "error", "error": {"type": kind, "message": message}}, headers or {})


# ---------------------------------------------------------------------------------------------- OpenAI


def openai_stream(text: str = "", calls: list[dict[str, Any]] | None = None, finish: str | None = None,
                  usage: dict[str, Any] | None = None, reasoning: str = "", drop_after: int | None = None) -> Stream:
    """calls: [{"id", "name", "args": raw JSON text}], streamed interleaved by index."""
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-5"}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> tuple[None, dict[str, Any]]:
        return None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
                      "usage": None}

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events += [chunk({"reasoning_content": p}) for p in _pieces(reasoning, 6)]
    events += [chunk({"content": p}) for p in _pieces(text, 5)]
    calls = calls or []
    for j, call in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": j, "id": call["id"], "type": "function",
                                             "function": {"name": call["name"], "arguments": ""}}]}))
    pieces = [_pieces(c["args"], 6) for c in calls]
    for step in range(max((len(p) for p in pieces), default=0)):
        for j, parts in enumerate(pieces):
            if step < len(parts):
                events.append(chunk({"tool_calls": [{"index": j, "function": {"arguments": parts[step]}}]}))
    events.append(chunk({}, finish or ("tool_calls" if calls else "stop")))
    events.append((None, {**base, "choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 30,
                                                            "total_tokens": 150, **(usage or {})}}))
    events.append((None, "[DONE]"))
    return Stream(events, drop_after)


def openai_failure(status: int, kind: str, message: str = "failed", headers: dict[str, str] | None = None) -> Failure:
    return Failure(status, {"error": {"message": message, "type": kind, "param": None, "code": kind}}, headers or {})


def _pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]
