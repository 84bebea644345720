"""Running the model's code in the person's namespace, saying what it changed, and taking that back.

The code runs on a worker thread, not on the kernel's main thread: the kernel's event loop stays free, so
the tool card streams the output, widget clicks are handled and the run can be stopped. Stopping (the Stop
button or the kernel's interrupt cancel the awaiting tool) raises KeyboardInterrupt inside the code's
thread, which ends any Python loop at once; code blocked inside one C call ends when that call returns.

Before and after a run the namespace's bindings are compared by identity: names created, rebound and
deleted. The objects that rebound or deleted names pointed to are kept for the latest runs, so `undo`
binds them again and removes what was created. The run's own values are kept too: an undone run can be
redone (`redo`), and a name the person rebound since the run (or since its undo) is found by identity and
left as it is unless the caller was told to overwrite it (`changed_since`, `overwrite`). An object changed
in place (`df["x"] = 1`) keeps its identity and cannot be restored from a binding; such changes are found in
the code's syntax and reported as "may have changed in place".
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import ctypes
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from ... import id as ids
from ...undo.change import Change, Conflict, Description
from ...undo.outcome import Direction, Outcome
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
    after: dict[str, Any] = field(default_factory=dict)
    """The objects the run left bound to the names it created or rebound: what redo binds again."""

    def left(self) -> dict[str, Any]:
        """Each name's binding as the run left it (`_GONE`: deleted by the run)."""
        return {**dict.fromkeys(self.previous, _GONE), **self.after}

    def before(self) -> dict[str, Any]:
        """Each name's binding as it was before the run (`_GONE`: created by the run)."""
        return {**dict.fromkeys(self.created, _GONE), **self.previous}


class _Gone:
    def __repr__(self) -> str:
        return "<unbound>"


_GONE: Any = _Gone()
"""Stands for "no binding" where a name's binding is compared."""


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
        self.undone: OrderedDict[str, UndoRecord] = OrderedDict()
        """Runs taken back, which `redo` can put back (the latest `KEEP_RUNS`)."""

    async def run(self, code: str, *, timeout_s: float, on_output: Callable[[str], None]) -> CodeRun:
        namespace: dict[str, Any] = self.shell.user_ns
        before = visible(namespace)
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[tuple[Any, CodeError | None, Any]] = loop.create_future()
        ident: list[int] = []

        def work() -> None:
            ident.append(threading.get_ident())
            outcome: tuple[Any, CodeError | None, Any]
            try:
                outcome = run_code(code, namespace, shell=self.shell, on_output=on_output)
            except BaseException as exc:  # an interrupt landing outside the code itself
                outcome = (None, CodeError(ename=type(exc).__name__, evalue=str(exc), traceback=""), None)

            def finish() -> None:
                if not done.done():
                    done.set_result(outcome)

            loop.call_soon_threadsafe(finish)

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
        now = visible(namespace)
        record = UndoRecord(ids.ascending("run"), created, {n: before[n] for n in (*rebound, *deleted)},
                            maybe_mutated(code, before), {n: now[n] for n in (*created, *rebound)})
        self.records[record.run_id] = record
        while len(self.records) > KEEP_RUNS:
            self.records.popitem(last=False)
        return record

    def changed_since(self, run_id: str, *, redo: bool = False) -> list[str]:
        """Names whose binding is no longer what the run (or, for `redo`, its undo) left: the person's since."""
        record = (self.undone if redo else self.records).get(run_id)
        if record is None:
            return []
        expected, target = (record.before(), record.left()) if redo else (record.left(), record.before())
        namespace = self.shell.user_ns
        return [n for n, value in expected.items()
                if namespace.get(n, _GONE) is not value and namespace.get(n, _GONE) is not target[n]]

    def undo(self, run_id: str | None = None, *, overwrite: Collection[str] = ()) -> str:
        """Rebind what the run changed; names the person rebound since are left alone and said so, unless
        `overwrite` names them (the person said yes)."""
        if not self.records:
            return "There is no agent change to the namespace left to undo."
        return self.step(run_id or next(reversed(self.records)), "undo", overwrite).text()

    def redo(self, run_id: str, *, overwrite: Collection[str] = ()) -> str:
        """Bind again what an undone run had bound; names the person rebound since the undo are left alone and
        said so, unless `overwrite` names them."""
        return self.step(run_id, "redo", overwrite).text()

    def step(self, run_id: str, direction: Direction, overwrite: Collection[str] = ()) -> Outcome:
        """Undo or redo one run: the same walk over its bindings, to what was there before it or to what it
        left, the record moving between `records` and `undone`."""
        undo = direction == "undo"
        source, target = (self.records, self.undone) if undo else (self.undone, self.records)
        done = Outcome(direction)
        if run_id not in source:
            why = "was already undone, or is too old to undo" if undo else "is not undone, or is too old to redo"
            done.add("skipped", "binding", run_id, why, told=True)
            done.said.append(f"The run {run_id} {why}.")
            return done
        kept = [n for n in self.changed_since(run_id, redo=not undo) if n not in overwrite]
        record = target[run_id] = source.pop(run_id)
        while len(self.undone) > KEEP_RUNS:
            self.undone.popitem(last=False)
        bound, removed = self._bind(record.before() if undo else record.left(), kept)
        for name in bound:
            done.add("restored", "binding", name, told=True, effect="rebound", now=_short(self.shell.user_ns[name]))
        for name in removed:
            done.add("restored", "binding", name, told=True, effect="unbound")
        for name in kept:
            done.add("kept", "binding", name, "you rebound it since", told=True)
        again = "" if undo else " again"
        said = [f"removed {', '.join(removed)}{again}" if removed else "",
                f"{'restored' if undo else 'bound'} {', '.join(bound)}{again}" if bound else ""]
        said = [s for s in (said if undo else said[::-1]) if s]
        text = f"{'Undone' if undo else 'Redone'}: " + "; ".join(said) + "." if said else f"Nothing to {direction}."
        if kept:
            text += f" Left as you rebound them since: {', '.join(kept)}."
        if undo and record.mutated:
            text += f" Changes made in place to {', '.join(record.mutated)} cannot be undone."
            for name in record.mutated:
                done.add("unavailable", "binding", name, "changed in place", told=True)
        done.said.append(text)
        return done

    def _bind(self, bindings: Mapping[str, Any], kept: Collection[str]) -> tuple[list[str], list[str]]:
        """Make the namespace hold `bindings` (`_GONE`: unbound), but for the `kept` names: (bound, removed)."""
        namespace = self.shell.user_ns
        bound, removed = [], []
        for name, value in bindings.items():
            if name in kept:
                continue
            if value is _GONE:
                if name in namespace:
                    del namespace[name]
                    removed.append(name)
            else:
                namespace[name] = value
                bound.append(name)
        return bound, removed


class BindingChange(Change):
    """A live run's bindings as one undoable change: a name the person rebound since is their conflict."""

    def __init__(self, runner: LiveRunner, run_id: str) -> None:
        self.runner, self.run_id = runner, run_id

    @property
    def description(self) -> Description:
        return Description("binding", self.run_id)

    async def conflicts(self, direction: Direction) -> list[Conflict]:
        redo = direction == "redo"
        return [binding_conflict(self.runner, self.run_id, name, redo)
                for name in self.runner.changed_since(self.run_id, redo=redo)]

    async def apply(self, direction: Direction, overwrite: Collection[str]) -> Outcome:
        return self.runner.step(self.run_id, direction, overwrite)


def binding_conflict(runner: LiveRunner, run_id: str, name: str, redo: bool) -> Conflict:
    """`name` rebound by the person since the run (or its undo), with what the undo (or redo) would bind."""
    record = (runner.undone if redo else runner.records)[run_id]
    target = (record.left() if redo else record.before())[name]
    now = runner.shell.user_ns.get(name, "<unbound>")
    when = "the undo" if redo else "the agent's run"
    verb = "redo" if redo else "undo"
    diff = f"--- {name} now (yours)\n+++ {name} after the {verb}\n-{_short(now)}\n+{_short(target)}\n"
    return Conflict(path=name, diff=diff, reason=f"you rebound {name} after {when}; the {verb} would bind it "
                                                 "over your value")


def _short(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:199] + "…"


async def _interrupt(thread: threading.Thread, ident: list[int], done: asyncio.Future[Any]) -> None:
    """Raise KeyboardInterrupt in the code's thread and give it a moment to unwind."""
    if ident and thread.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident[0]), ctypes.py_object(KeyboardInterrupt))
    with contextlib.suppress(TimeoutError, asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(done), STOP_WAIT_S)
