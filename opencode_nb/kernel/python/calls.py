"""Calling one of the person's functions for an agent, live, with what it shows captured as a python run's.

A person's function (`@tool`) runs where the person's own cells run, in their namespace, under the same
constraints as the `python` tool's live runs (`live.py`): a plain function runs on a worker thread, so the
kernel's loop stays free (cards stream, widgets answer, Stop works by raising KeyboardInterrupt in that
thread); an async function is awaited on the kernel's loop, as the person's own `await` would be. What it
prints, `display()`s and draws, and what it returns, are captured by the code that captures a python run
(`execute.py`) and come back as a `CodeRun`, so the tool formats them as it formats python's results.

An async function's prints are captured for the kernel's main thread while it is awaited: anything else the
main thread prints in that time (a detached agent's cell, say) lands in the same capture.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Callable
from typing import Any

from ...values import CodeError, CodeRun, NamespaceChanges
from ..futures import settle
from .execute import (
    Captured,
    _capture_new_figures,
    _displays_to,
    _figure_numbers,
    _streams_to,
    format_value,
    trimmed_traceback,
)
from .live import _interrupt, compare, visible


class LiveCaller:
    """A `tool.person.Caller` bound to the kernel's shell."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    async def __call__(self, function: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], *,
                       timeout_s: float, on_output: Callable[[str], None]) -> CodeRun:
        namespace = self.shell.user_ns
        before = visible(namespace)
        started = time.perf_counter()
        captured = Captured()

        def write(text: str) -> None:
            captured.chunks.append(text)
            on_output(text)

        if inspect.iscoroutinefunction(function):
            value, error = await self._awaited(function(*args, **kwargs), write, captured, timeout_s)
        else:
            value, error = await self._threaded(function, args, kwargs, write, captured, timeout_s)
            if error is None and inspect.isawaitable(value):
                value, error = await self._awaited(value, write, captured, timeout_s)
        result = format_value(value, self.shell) if error is None and value is not None else None
        created, rebound, deleted = compare(before, visible(namespace))
        return CodeRun(mode="live", output=captured.output, displays=captured.displays, result=result, error=error,
                       changes=NamespaceChanges(created=created, rebound=rebound, deleted=deleted),
                       duration_s=round(time.perf_counter() - started, 4))

    async def _threaded(self, function: Callable[..., Any], args: list[Any], kwargs: dict[str, Any],
                        write: Callable[[str], None], captured: Captured,
                        timeout_s: float) -> tuple[Any, CodeError | None]:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[tuple[Any, CodeError | None]] = loop.create_future()
        ident: list[int] = []

        def work() -> None:
            ident.append(threading.get_ident())
            try:
                outcome = self._call(function, args, kwargs, write, captured)
            except BaseException as exc:  # an interrupt landing outside the function itself
                outcome = (None, CodeError(ename=type(exc).__name__, evalue=str(exc), traceback=""))
            loop.call_soon_threadsafe(settle, done, outcome)

        thread = threading.Thread(target=work, name="opencode-nb-tool", daemon=True)
        thread.start()
        try:
            async with asyncio.timeout(timeout_s):
                return await asyncio.shield(done)
        except TimeoutError:
            await _interrupt(thread, ident, done)
            return None, _timed_out(timeout_s)
        except asyncio.CancelledError:
            await _interrupt(thread, ident, done)
            raise

    def _call(self, function: Callable[..., Any], args: list[Any], kwargs: dict[str, Any],
              write: Callable[[str], None], captured: Captured) -> tuple[Any, CodeError | None]:
        figures = _figure_numbers()
        with _streams_to(write), _displays_to(self.shell, captured.displays):
            try:
                return function(*args, **kwargs), None
            except KeyboardInterrupt:
                return None, CodeError(ename="KeyboardInterrupt", evalue="the call was stopped",
                                       traceback="The function was stopped before it returned.")
            except BaseException as exc:  # SystemExit included: the person's function must not end the kernel
                return None, _error(exc)
            finally:
                _capture_new_figures(figures, captured.displays)

    async def _awaited(self, awaitable: Any, write: Callable[[str], None], captured: Captured,
                       timeout_s: float) -> tuple[Any, CodeError | None]:
        figures = _figure_numbers()
        with _streams_to(write), _displays_to(self.shell, captured.displays):
            try:
                async with asyncio.timeout(timeout_s):
                    return await awaitable, None
            except TimeoutError:
                return None, _timed_out(timeout_s)
            except Exception as exc:
                return None, _error(exc)
            finally:
                _capture_new_figures(figures, captured.displays)


def _error(exc: BaseException) -> CodeError:
    """The exception with the function's frames (ours left out), as a python run's traceback is trimmed."""
    if exc.__traceback__ is not None and exc.__traceback__.tb_frame.f_code.co_filename == __file__:
        exc = exc.with_traceback(exc.__traceback__.tb_next)
    return CodeError(ename=type(exc).__name__, evalue=str(exc), traceback=trimmed_traceback(exc))


def _timed_out(timeout_s: float) -> CodeError:
    return CodeError(ename="TimeoutError", evalue=f"stopped after {timeout_s:g} s",
                     traceback=f"The function was stopped after {timeout_s:g} s, its timeout. The person can give it "
                               "more time with @tool(timeout=...).")
