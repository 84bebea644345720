"""Running a piece of the model's Python with IPython's semantics, capturing everything it shows.

One function serves every place code runs: the person's live namespace (on a worker thread), a
copy-on-write fork of the kernel, and a spawned worker. It gives what a cell would show, but to the model
instead of the notebook:

- the value of a last expression, formatted by IPython's display formatter when there is a shell (a frame
  gives its HTML table and its text), as a cell's `Out` would. It goes to the model only: `_`, `__`, `___`,
  `Out` and the execution count are the person's history of their own cells, so the value is bound to
  none of them, and the code never passes through IPython's display hook or input history;
- `display()` calls and matplotlib figures, as mime bundles, through a capturing display publisher;
- stdout and stderr, interleaved as written, streamed to a callback;
- an exception as (name, value, traceback), the traceback trimmed to the code's own frames and the last
  library frames, which is what tells the model what to fix.

Magics and `!shell` lines are transformed as IPython would when a shell is there. Output written at the C
level (fd 1 and 2) is not captured here: in a fork it is redirected by the caller; in live mode it reaches
the cell, as it would for the person's own code.
"""

from __future__ import annotations

import ast
import base64
import linecache
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ...values import CodeError

FILENAME = "<agent-code>"
MAX_TRACEBACK_FRAMES = 8
"""Beyond the code's own frames, how many of the innermost library frames a traceback keeps."""

Output = Callable[[str], None]


class Captured:
    """What one run produced besides its value."""

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.displays: list[dict[str, Any]] = []

    @property
    def output(self) -> str:
        return "".join(self.chunks)


def run_code(code: str, namespace: dict[str, Any], *, shell: Any = None,
             on_output: Output | None = None) -> tuple[dict[str, Any] | None, CodeError | None, Captured]:
    """Run `code` in `namespace`; returns (the last value's mime bundle, the error, what was captured).

    Args:
        shell: the IPython shell, when there is one: magics are transformed, values are formatted as a cell
            would show them, and `display()` is captured through it.
        on_output: told each piece of stdout/stderr as it is written (the live card streams it).
    """
    captured = Captured()

    def write(text: str) -> None:
        captured.chunks.append(text)
        if on_output is not None:
            on_output(text)

    source = shell.transform_cell(code) if shell is not None else code
    try:
        tree = ast.parse(source, FILENAME)
    except SyntaxError as exc:
        return None, CodeError(ename="SyntaxError", evalue=str(exc.msg),
                               traceback=_syntax_error_text(exc, source)), captured
    linecache.cache[FILENAME] = (len(source), None, source.splitlines(True), FILENAME)  # tracebacks show lines
    last: ast.expr | None = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1].value
        tree.body.pop()
    value: Any = None
    error: CodeError | None = None
    figures_before = _figure_numbers()
    with _streams_to(write), _displays_to(shell, captured.displays):
        try:
            exec(compile(tree, FILENAME, "exec"), namespace)  # the point of the tool: run the model's code
            if last is not None:
                value = eval(compile(ast.Expression(last), FILENAME, "eval"), namespace)
        except KeyboardInterrupt:
            error = CodeError(ename="KeyboardInterrupt", evalue="the run was stopped",
                              traceback="The code was stopped before it finished.")
        except BaseException as exc:  # SystemExit included: the model's code must not end the kernel
            error = CodeError(ename=type(exc).__name__, evalue=str(exc), traceback=trimmed_traceback(exc))
        _capture_new_figures(figures_before, captured.displays)
    result = None
    if error is None and last is not None and value is not None:
        result = format_value(value, shell)
    return result, error, captured


def format_value(value: Any, shell: Any = None) -> dict[str, Any]:
    """A value as a cell's output shows it: IPython's formatters when there is a shell, else its repr."""
    if shell is not None:
        try:
            data, _ = shell.display_formatter.format(value)
            return {k: v for k, v in data.items() if k in ("text/plain", "text/html", "image/png", "text/markdown")}
        except Exception:
            pass
    try:
        return {"text/plain": repr(value)}
    except Exception as exc:
        return {"text/plain": f"<{type(value).__name__} whose repr failed: {exc}>"}


def trimmed_traceback(exc: BaseException) -> str:
    """The frames of the model's code, plus the innermost library frames; ours never appear."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.endswith(("execute.py",))]
    own = [i for i, f in enumerate(frames) if f.filename == FILENAME]
    keep = frames[own[0]:] if own else frames
    if len(keep) > MAX_TRACEBACK_FRAMES + 1:
        keep = [keep[0], *keep[-MAX_TRACEBACK_FRAMES:]]
    lines = ["Traceback (most recent call last):"]
    for frame in keep:
        where = "your code" if frame.filename == FILENAME else frame.filename
        lines.append(f'  File "{where}", line {frame.lineno}, in {frame.name}')
        if frame.line:
            lines.append(f"    {frame.line}")
    lines.extend(traceback.format_exception_only(type(exc), exc))
    return "\n".join(line.rstrip("\n") for line in lines)


def _syntax_error_text(exc: SyntaxError, source: str) -> str:
    lines = source.splitlines()
    line = lines[exc.lineno - 1] if exc.lineno and 0 < exc.lineno <= len(lines) else ""
    pointer = " " * max((exc.offset or 1) - 1, 0) + "^"
    return f"line {exc.lineno}: {exc.msg}\n    {line}\n    {pointer}"


# ---------------------------------------------------------------------------------------------- streams


class _ThreadStream:
    """Stands in for sys.stdout/sys.stderr: a thread running model code writes to its capture, every other
    thread to the stream that was there before. So a live run on a worker thread captures its own prints
    and nothing of the kernel's."""

    def __init__(self, original: Any) -> None:
        self.original = original
        self.targets: dict[int, Callable[[str], None]] = {}

    def write(self, text: str) -> int:
        target = self.targets.get(threading.get_ident())
        if target is None:
            return self.original.write(text)
        target(str(text))
        return len(text)

    def flush(self) -> None:
        if threading.get_ident() not in self.targets:
            self.original.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


_lock = threading.Lock()


@contextmanager
def _streams_to(write: Callable[[str], None]) -> Iterator[None]:
    ident = threading.get_ident()
    with _lock:
        routers = []
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            if not isinstance(stream, _ThreadStream):
                stream = _ThreadStream(stream)
                setattr(sys, name, stream)
            stream.targets[ident] = write
            routers.append(stream)
    try:
        yield
    finally:
        with _lock:
            for stream in routers:
                stream.targets.pop(ident, None)
            for name in ("stdout", "stderr"):
                stream = getattr(sys, name)
                if isinstance(stream, _ThreadStream) and not stream.targets:
                    setattr(sys, name, stream.original)


# ---------------------------------------------------------------------------------------------- displays


class _CapturingPublisher:
    """A display publisher that keeps what the model's code displays instead of sending it to the cell."""

    def __init__(self, original: Any, into: list[dict[str, Any]]) -> None:
        self.original = original
        self.into = into
        self.is_publishing = False

    def publish(self, data: dict[str, Any], metadata: Any = None, source: Any = None, *, transient: Any = None,
                update: bool = False, **kwargs: Any) -> None:
        self.into.append({k: v for k, v in data.items() if k in ("text/plain", "text/html", "image/png",
                                                                 "text/markdown", "image/jpeg")})

    def clear_output(self, wait: bool = False) -> None:
        self.into.clear()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original, name)


@contextmanager
def _displays_to(shell: Any, into: list[dict[str, Any]]) -> Iterator[None]:
    if shell is None:
        yield
        return
    original = shell.display_pub
    shell.display_pub = _CapturingPublisher(original, into)
    try:
        yield
    finally:
        shell.display_pub = original


def _figure_numbers() -> set[int]:
    pyplot = sys.modules.get("matplotlib.pyplot")
    return set(pyplot.get_fignums()) if pyplot is not None else set()


def _capture_new_figures(before: set[int], into: list[dict[str, Any]]) -> None:
    """Figures the code made and left open become PNG outputs, and are closed so the cell never shows them."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    import io

    for number in sorted(set(pyplot.get_fignums()) - before):
        figure = pyplot.figure(number)
        buffer = io.BytesIO()
        try:
            figure.savefig(buffer, format="png", bbox_inches="tight")
            into.append({"image/png": base64.b64encode(buffer.getvalue()).decode(),
                         "text/plain": f"<Figure {number}>"})
        except Exception as exc:
            into.append({"text/plain": f"<Figure {number} could not be drawn: {exc}>"})
        finally:
            pyplot.close(figure)

