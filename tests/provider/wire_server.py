"""A loopback HTTP server that speaks server-sent events, for driving the real SDKs in tests.

Each test queues the responses the server gives, in order, whatever the path:

- `Stream(events)`: a 200 `text/event-stream`, one chunk per event; `drop_after=N` cuts the connection
  after N events (the response never ends), `delay_s` plays a slow model, `stall_after=N` goes silent
  after N events for `stall_s` (or until the server closes) and then carries on;
- `Failure(status, body, headers)`: an HTTP error with a JSON body and headers such as `retry-after`;
- `Drop()`: the connection is closed before any response.
- `Hang()`: the request is read and nothing is ever sent (until the server closes).

Every request is recorded (`received`: path, lower-cased headers, JSON body), so a test can check what
the SDK really put on the wire. The protocol-specific builders live in `wire_anthropic` and
`wire_openai`.
"""

from __future__ import annotations

import json
import queue
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Stream:
    events: list[tuple[str | None, Any]]
    """(event name or None, data: a dict sent as JSON, or a raw string such as OpenAI's "[DONE]")."""
    drop_after: int | None = None
    """Close the connection after this many events, without ending the response."""
    delay_s: float = 0.0
    """Pause before each event, to play a slow model."""
    stall_after: int | None = None
    """Send nothing after this many events, for `stall_s` seconds (the connection stays open)."""
    stall_s: float = 30.0


@dataclass
class Failure:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Drop:
    """Close the connection without answering (a server that died before responding)."""


@dataclass
class Hang:
    """Read the request and answer nothing, not even headers (a server stuck before it starts to respond)."""


Response = Stream | Failure | Drop | Hang


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class WireServer:
    """Start it, point an SDK's `base_url` at `url`, `queue(...)` responses, read `received`."""

    def __init__(self) -> None:
        self.responses: queue.Queue[Response] = queue.Queue()
        self.received: list[Received] = []
        self.disconnects = 0
        """Streams the client closed before their end (a consumer that stopped reading)."""
        self.unanswered: list[str] = []
        """Paths of requests that found nothing queued (answered with a 500 naming the problem)."""
        self.closing = threading.Event()
        """Set by `close()`: ends any stall at once, so a stalled handler never outlives its test."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else {}
                server.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                try:
                    response = server.responses.get_nowait()
                except queue.Empty:
                    server.unanswered.append(self.path)
                    message = f"wire server: no response queued for POST {self.path}"
                    response = Failure(500, {"type": "error", "error": {"type": "api_error", "message": message}})
                if isinstance(response, Hang):
                    server.closing.wait(60)
                    self._cut()
                elif isinstance(response, Drop):
                    self._cut()
                elif isinstance(response, Failure):
                    self._fail(response)
                else:
                    self._stream(response)

            def _fail(self, failure: Failure) -> None:
                data = json.dumps(failure.body).encode()
                self.send_response(failure.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in failure.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, stream: Stream) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for i, (name, data) in enumerate(stream.events):
                    if stream.drop_after is not None and i >= stream.drop_after:
                        self._cut()
                        return
                    if stream.stall_after is not None and i == stream.stall_after:
                        server.closing.wait(stream.stall_s)
                    if stream.delay_s:
                        time.sleep(stream.delay_s)
                    payload = data if isinstance(data, str) else json.dumps(data)
                    chunk = ((f"event: {name}\n" if name else "") + f"data: {payload}\n\n").encode()
                    try:
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.flush()
                    except OSError:  # the client went away (a stopped stream): nothing left to do
                        server.disconnects += 1
                        self.close_connection = True
                        return
                self.wfile.write(b"0\r\n\r\n")

            def _cut(self) -> None:
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def last(self) -> Received:
        return self.received[-1]

    def queue(self, *responses: Response) -> None:
        for response in responses:
            self.responses.put(response)

    def close(self) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> WireServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]
