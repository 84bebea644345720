"""One MCP server's connection: started, listed, called, and restarted after it broke.

The SDK's transports and `ClientSession` are async context managers that must be entered and left in one
task, so each connection lives in a task of its own (`_serve`), which opens the transport, initializes the
session, lists the tools, and then waits until it is told to stop or the connection breaks. Calls come from
tool calls' tasks and race the call against the connection's end and the call's timeout:

- the server exits or its pipe closes mid-call: the call fails at once with what the server last wrote to
  stderr;
- it writes something that is not MCP: the connection is dropped and the call fails, saying so;
- it does not answer within `call_timeout`: the call fails, the server is stopped (it may be stuck);
- in every case the status says `failed` and why, and the next call starts the server again.

A `notifications/tools/list_changed` from the server lists the tools again; `on_tools` hears of every new list.
Nothing here blocks the event loop, and `aclose` waits for every process it started to be gone.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal

import mcp_types as types
from mcp import ClientSession, MCPError
from mcp.client._transport import TransportStreams
from pydantic import ValidationError

from ..permission.events import Ask

log = logging.getLogger(__name__)

Status = Literal["disabled", "waiting", "refused", "idle", "starting", "ready", "failed"]
"""disabled: `enabled: false`; waiting: for the person's approval; refused: approval was refused; idle: not
started yet; starting; ready; failed: `error` says why (the next call tries again)."""

Opener = Callable[[], AbstractAsyncContextManager[TransportStreams]]
Stage = Literal["timeout", "start", "running"]
"""When a connection failed: its start-up timeout ran out, it broke while starting, or after it was ready."""
Explain = Callable[[str, Stage], str]
"""`explain(reason, stage)`: the whole error for a failure, from the client's own reason and what the launcher
knows (stderr, refused hosts: `failure.py`)."""


def _as_said(reason: str, stage: Stage) -> str:
    return f"{reason} (raise `timeout`, in milliseconds, if it needs longer)" if stage == "timeout" else reason


class CallFailed(Exception):
    """A call did not complete; `str()` says why, in words for the model."""


class ServerClient:
    """The connection to one server: a local process, or a remote URL."""

    def __init__(self, name: str, openers: list[Opener], *, timeout_s: float, call_timeout_s: float,
                 on_tools: Callable[[ServerClient], None], explain_failure: Explain = _as_said,
                 call_notes: Callable[[], str] = lambda: "") -> None:
        self.name = name
        self.openers = openers
        """Ways to connect, tried in order until one works: streamable HTTP, then SSE."""
        self.timeout_s = timeout_s
        self.call_timeout_s = call_timeout_s
        self.on_tools = on_tools
        self.explain_failure = explain_failure
        """A failure's reason with what the launcher knows of it (for a local server: `failure.explain`)."""
        self.call_notes = call_notes
        """What a call the server answered with an error adds (for a local server: `failure.CallNotes`)."""
        self.status: Status = "idle"
        self.error: str | None = None
        self.tools: list[types.Tool] = []
        self.instructions: str | None = None
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Event = asyncio.Event()
        self._stop: asyncio.Event = asyncio.Event()
        self._ended: asyncio.Event = asyncio.Event()
        self._old: set[asyncio.Task[None]] = set()
        self._listing: set[asyncio.Task[None]] = set()
        self.starts = 0
        self.asking: Ask | None = None
        """The `ask` of the call running now: a host the server connects to may be put to the person through it."""

    # ------------------------------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Start connecting in the background, unless connected or connecting already."""
        if self._task is not None and not self._task.done():
            return
        self.starts += 1
        _warm_up()
        self.status, self.error = "starting", None
        self._ready, self._stop, self._ended = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._serve(self._ready, self._stop, self._ended),
                                                            name=f"mcp server {self.name}")

    async def started(self, timeout_s: float | None = None) -> None:
        """Wait until the server is ready or failed, at most `timeout_s` (its own `timeout` by default)."""
        if self._task is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), self.timeout_s if timeout_s is None else timeout_s)

    async def _serve(self, ready: asyncio.Event, stop: asyncio.Event, ended: asyncio.Event) -> None:
        tried: list[str] = []
        try:
            async with asyncio.timeout(self.timeout_s) as deadline:
                for index, opener in enumerate(self.openers):
                    async with contextlib.AsyncExitStack() as stack:
                        try:
                            read, write = await stack.enter_async_context(opener())
                            session = await stack.enter_async_context(
                                ClientSession(read, write, message_handler=self._on_message))
                            result = await session.initialize()
                            tools = await _list_tools(session)
                        except Exception as exc:
                            tried.append(_reason(exc))
                            if index + 1 < len(self.openers):
                                continue
                            raise
                        deadline.reschedule(None)
                        self._session, self.tools = session, tools
                        self.instructions = result.instructions
                        self.status = "ready"
                        ready.set()
                        self.on_tools(self)
                        await stop.wait()
                        return
        except TimeoutError:
            if self._stop is stop and not stop.is_set():
                self._fail(f"it did not start and list its tools within {self.timeout_s:g} s", "timeout")
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            if self._stop is stop and not stop.is_set():
                self._fail("; then ".join([*tried[:-1], _reason(exc)]) if tried else _reason(exc))
        finally:
            if self._stop is stop:
                self._session = None
            ready.set()
            ended.set()

    def _fail(self, reason: str, stage: Stage | None = None) -> None:
        stage = stage or ("start" if self.status == "starting" else "running")
        self.status = "failed"
        try:
            self.error = self.explain_failure(reason, stage)
        except Exception:  # what explains a failure must not hide it
            log.exception("explaining the failure of MCP server %s", self.name)
            self.error = reason
        log.info("MCP server %s failed: %s", self.name, self.error)

    def drop(self, reason: str) -> None:
        """End the connection from outside (its process broke a rule: `servers.py`); the next call starts anew."""
        self._drop(reason)

    def _drop(self, reason: str) -> None:
        """End the current connection (in the background) and say why; the next call starts a new one."""
        if self.status != "failed":
            self._fail(reason)
        self._session = None
        self._stop.set()
        if self._task is not None:
            self._old.add(self._task)
            self._task.add_done_callback(self._old.discard)
            self._task = None

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self._drop(f"it sent something that is not MCP{_what_came(message)}")
        elif isinstance(message, types.ToolListChangedNotification) and self._session is not None:
            task = asyncio.get_running_loop().create_task(self._relist(self._session))
            self._listing.add(task)
            task.add_done_callback(self._listing.discard)

    async def _relist(self, session: ClientSession) -> None:
        try:
            tools = await asyncio.wait_for(_list_tools(session), self.timeout_s)
        except Exception as exc:
            log.info("MCP server %s: listing its tools again failed: %s", self.name, exc)
            return
        if session is self._session:
            self.tools = tools
            self.on_tools(self)

    def cancel(self) -> None:
        """End every connection's task now, from any thread; each stops its process as it unwinds. A task whose
        loop has closed was cancelled when the loop ended."""
        for task in (self._task, *self._old, *self._listing):
            if task is None or task.done():
                continue
            loop = task.get_loop()
            if loop.is_closed():
                continue
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                task.cancel()
            else:
                loop.call_soon_threadsafe(task.cancel)

    async def aclose(self) -> None:
        """Stop the server (and any earlier connection still winding down) and wait until they are gone."""
        for task in self._listing:
            task.cancel()
        if self.status == "starting" and self._task is not None:
            self._task.cancel()  # not waiting out its start-up timeout; it stops its process as it unwinds
        self._stop.set()
        tasks = [t for t in (self._task, *self._old) if t is not None]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._task, self._session = None, None
        if self.status in ("ready", "starting"):
            self.status = "idle"

    # ------------------------------------------------------------------------------------------ calling

    async def call(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Call `tool`, starting the server first if it is not running.

        Raises:
            CallFailed: the server could not be started, broke, answered garbage or took too long.
        """
        if self._session is None:
            self.start()
            await self.started()
        warming = _warm_up()
        if not warming.done():
            await asyncio.wrap_future(warming)
        session, ended = self._session, self._ended
        if session is None:
            raise CallFailed(f"The MCP server {self.name} is not available: {self.error or 'it is still starting'}.")
        call = asyncio.ensure_future(session.call_tool(tool, arguments))
        gone = asyncio.ensure_future(ended.wait())
        try:
            done, _ = await asyncio.wait({call, gone}, timeout=self.call_timeout_s,
                                         return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            call.cancel()  # Stop: the SDK tells the server the request is cancelled
            raise
        finally:
            gone.cancel()
        if call in done:
            try:
                result = call.result()
                await asyncio.sleep(0)  # a list_changed sent before the result has been handled by now
                if self._listing:  # the call changed the tool list: the next step offers the new one
                    await asyncio.wait(set(self._listing), timeout=self.timeout_s)
                return result
            except MCPError as exc:
                if exc.error.code == types.CONNECTION_CLOSED:
                    self._drop("it closed the connection during a call")
                    raise CallFailed(self._broke(tool)) from None
                raise CallFailed(f"The MCP server {self.name} refused the call of {tool}: {exc.error.message}") \
                    from None
            except RuntimeError as exc:  # the SDK refused the result (structured content not matching its schema)
                raise CallFailed(f"The MCP server {self.name} answered the call of {tool} with a result that does "
                                 f"not match the tool's own description: {exc}") from None
            except Exception as exc:
                self._drop(_reason(exc))
                raise CallFailed(self._broke(tool)) from None
        call.cancel()
        if gone in done:
            raise CallFailed(self._broke(tool))
        self._drop(f"it did not answer a call of {tool} within {self.call_timeout_s:g} s")
        raise CallFailed(f"The MCP server {self.name} did not answer the call of {tool} within "
                         f"{self.call_timeout_s:g} s, so it was stopped; it starts again at the next call. If the "
                         "work is expected to take that long, ask the person to raise the server's `call_timeout`.")

    def _broke(self, tool: str) -> str:
        return (f"The MCP server {self.name} stopped working during the call of {tool}: {self.error}. It starts "
                "again at the next call; the call may or may not have had its effect.")


async def _list_tools(session: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            return tools


def _reason(exc: BaseException) -> str:
    """An exception as a short phrase; task groups wrap the interesting one."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        if exc.error.code == types.CONNECTION_CLOSED:
            return "it exited, or closed its connection, before answering"
        return exc.error.message
    if isinstance(exc, FileNotFoundError):
        return f"its program was not found ({exc.filename or exc})"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _what_came(exc: Exception) -> str:
    """`: 'the line'` for a line that did not parse as JSON-RPC, else the error itself."""
    if isinstance(exc, ValidationError) and exc.errors():
        shown = repr(exc.errors()[0].get("input"))
        return f": {shown[:120]}{'…' if len(shown) > 120 else ''}"
    return f" ({_reason(exc)})"


_warming: concurrent.futures.Future[object] | None = None


def _warm_up() -> concurrent.futures.Future[object]:
    """Import, on a thread, once per process, what the SDK imports at the first call of a tool that declares an
    output schema: `jsonschema` takes seconds to import (it builds a URI grammar) and would stall the event loop."""
    global _warming
    if _warming is None:
        _warming = concurrent.futures.ThreadPoolExecutor(1, "mcp-warm-up").submit(importlib.import_module,
                                                                                  "jsonschema")
    return _warming
