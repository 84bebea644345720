"""Running the model's code in the person's namespace, saying what it changed, and taking that back.

The code runs on a worker thread, not on the kernel's main thread: the kernel's event loop stays free, so
the tool card streams the output, widget clicks are handled and the run can be stopped. Stopping (the Stop
button or the kernel's interrupt cancel the awaiting tool) raises KeyboardInterrupt inside the code's
thread, which ends any Python loop at once; code blocked inside one C call ends when that call returns.

Before and after a run the namespace's bindings are compared by identity: names created, rebound and
deleted. The objects that rebound or deleted names pointed to are kept for the latest runs, so `undo`
binds them again and removes what was created. An object changed in place (`df["x"] = 1`) keeps its
identity and cannot be restored from a binding; such changes are found in the code's syntax and reported
as "may have changed in place".
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import ctypes
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from ... import id as ids
from ...values import CodeError, CodeRun, NamespaceChanges
from .execute import run_code

STOP_WAIT_S = 0.4
"""After KeyboardInterrupt is raised in the code's thread, how long the stop waits for it to end."""
KEEP_RUNS = 20
"""How many live runs can be undone; older ones forget the objects they replaced."""

HIDDEN = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})

MUTATORS = frozenset({
    "append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "sort", "reverse",
    "add", "discard", "fill", "resize", "put", "itemset", "write", "__setitem__", "__delitem__",
    "drop_duplicates", "dropna", "fillna", "replace", "rename", "reset_index", "set_index", "drop",
    "interpolate", "where", "mask", "clip", "sort_values", "sort_index",
})
"""Method names that change their object (or may: pandas methods only with `inplace=True`)."""
PANDAS_INPLACE = frozenset({"drop_duplicates", "dropna", "fillna", "replace", "rename", "reset_index", "set_index",
                            "drop", "interpolate", "where", "mask", "clip", "sort_values", "sort_index"})


@dataclass
class UndoRecord:
    run_id: str
    created: list[str]
    previous: dict[str, Any] = field(default_factory=dict)
    """The objects rebound or deleted names pointed to before the run."""
    mutated: list[str] = field(default_factory=list)


def visible(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The person's own names: not private ones, not IPython's history and helpers."""
    return {k: v for k, v in list(namespace.items()) if not k.startswith("_") and k not in HIDDEN}


def compare(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[list[str], list[str], list[str]]:
    created = sorted(k for k in after if k not in before)
    deleted = sorted(k for k in before if k not in after)
    rebound = sorted(k for k in after if k in before and after[k] is not before[k])
    return created, rebound, deleted


def maybe_mutated(code: str, existing: Mapping[str, Any]) -> list[str]:
    """Existing names the code may change in place, read from its syntax (never run)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found: set[str] = set()

    def root(node: ast.AST) -> str | None:
        while isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = list(node.targets) if isinstance(node, ast.Assign) else [node.target]
            targets = [t for t in targets if isinstance(t, ast.Attribute | ast.Subscript)]
        elif isinstance(node, ast.AugAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = [t for t in node.targets if isinstance(t, ast.Attribute | ast.Subscript)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            method = node.func.attr
            inplace = any(k.arg == "inplace" and not (isinstance(k.value, ast.Constant) and not k.value.value)
                          for k in node.keywords)
            if method in MUTATORS and (method not in PANDAS_INPLACE or inplace):
                targets = [node.func.value]
        for target in targets:
            name = root(target)
            if name is not None and name in existing:
                found.add(name)
    return sorted(found)


class LiveRunner:
    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.records: OrderedDict[str, UndoRecord] = OrderedDict()

    async def run(self, code: str, *, timeout_s: float, on_output: Callable[[str], None]) -> CodeRun:
        namespace: MutableMapping[str, Any] = self.shell.user_ns
        before = visible(namespace)
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[tuple[Any, CodeError | None, Any]] = loop.create_future()
        ident: list[int] = []

        def work() -> None:
            ident.append(threading.get_ident())
            try:
                outcome = run_code(code, namespace, shell=self.shell, on_output=on_output)
            except BaseException as exc:  # an interrupt landing outside the code itself
                outcome = (None, CodeError(ename=type(exc).__name__, evalue=str(exc), traceback=""), None)
            loop.call_soon_threadsafe(lambda: done.done() or done.set_result(outcome))

        thread = threading.Thread(target=work, name="opencode-nb-python", daemon=True)
        thread.start()
        try:
            async with asyncio.timeout(timeout_s):
                result, error, captured = await asyncio.shield(done)
        except TimeoutError:
            await _interrupt(thread, ident, done)
            result, error, captured = (done.result() if done.done() and not done.cancelled()
                                       else (None, None, None))
            error = CodeError(ename="TimeoutError", evalue=f"stopped after {timeout_s:g} s",
                              traceback=f"The code was stopped after {timeout_s:g} s, its timeout. Make it faster "
                                        "(sample the data first), or give a larger timeout.")
        except asyncio.CancelledError:
            await _interrupt(thread, ident, done)
            self._record(code, before, namespace)  # what it bound before the stop can still be undone
            raise
        record = self._record(code, before, namespace)
        if record is not None:
            rebound = [n for n in record.previous if n in namespace]
            deleted = [n for n in record.previous if n not in namespace]
            mutated = [n for n in record.mutated if n not in record.previous]
            changes = NamespaceChanges(created=record.created, rebound=rebound, deleted=deleted, mutated=mutated)
        else:
            changes = NamespaceChanges(mutated=maybe_mutated(code, before))
        return CodeRun(
            mode="live", output=captured.output if captured else "", displays=captured.displays if captured else [],
            result=result, error=error, run_id=record.run_id if record else None, changes=changes,
            duration_s=round(time.perf_counter() - started, 4),
        )

    def _record(self, code: str, before: Mapping[str, Any], namespace: Mapping[str, Any]) -> UndoRecord | None:
        created, rebound, deleted = compare(before, visible(namespace))
        if not (created or rebound or deleted):
            return None
        record = UndoRecord(ids.ascending("run"), created, {n: before[n] for n in (*rebound, *deleted)},
                            maybe_mutated(code, before))
        self.records[record.run_id] = record
        while len(self.records) > KEEP_RUNS:
            self.records.popitem(last=False)
        return record

    def undo(self, run_id: str | None = None) -> str:
        """Rebind what the run changed; names the person rebound since are left alone and said so."""
        if not self.records:
            return "There is no agent change to the namespace left to undo."
        if run_id is None:
            run_id = next(reversed(self.records))
        record = self.records.pop(run_id, None)
        if record is None:
            return f"The run {run_id} was already undone, or is too old to undo."
        namespace = self.shell.user_ns
        restored, removed = [], []
        for name, value in record.previous.items():
            namespace[name] = value
            restored.append(name)
        for name in record.created:
            if name in namespace:
                del namespace[name]
                removed.append(name)
        said = []
        if removed:
            said.append(f"removed {', '.join(removed)}")
        if restored:
            said.append(f"restored {', '.join(restored)}")
        text = "Undone: " + "; ".join(said) + "." if said else "Nothing to undo."
        if record.mutated:
            text += f" Changes made in place to {', '.join(record.mutated)} cannot be undone."
        return text


async def _interrupt(thread: threading.Thread, ident: list[int], done: asyncio.Future[Any]) -> None:
    """Raise KeyboardInterrupt in the code's thread and give it a moment to unwind."""
    if ident and thread.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident[0]), ctypes.py_object(KeyboardInterrupt))
    with contextlib.suppress(TimeoutError, asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(done), STOP_WAIT_S)
