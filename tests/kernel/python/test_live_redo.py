"""A live run's bindings can be undone and redone, to the very objects, and a name the person rebound in between is
theirs: kept and named, unless the caller says the person agreed to have it written over (no kernel)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from opencode_nb.kernel.python.live import LiveRunner, visible


def run(runner: LiveRunner, code: str) -> str:
    result = asyncio.run(runner.run(code, timeout_s=10, on_output=lambda _: None))
    assert result.error is None, result.error
    assert result.run_id is not None
    return result.run_id


def runner_with(**names: Any) -> LiveRunner:
    """A runner over a namespace of its own: code runs as in the kernel, untransformed and displaying nothing."""
    return LiveRunner(SimpleNamespace(user_ns=dict(names), transform_cell=lambda code: code, display_pub=None,
                                      display_formatter=None))


def test_undo_then_redo_binds_the_runs_own_objects_again():
    runner = runner_with(data=[1, 2], gone="x")
    ns = runner.shell.user_ns
    original = ns["data"]
    run_id = run(runner, "made = {'a': 1}\ndata = [3]\ndel gone")
    made, rebound = ns["made"], ns["data"]

    assert runner.undo(run_id) == "Undone: removed made; restored data, gone."
    assert ns["data"] is original and ns["gone"] == "x" and "made" not in ns

    assert runner.redo(run_id) == "Redone: bound data, made again; removed gone again."
    assert ns["made"] is made and ns["data"] is rebound and "gone" not in ns
    assert runner.redo(run_id).startswith("The run"), "a redone run is not redone twice"
    assert runner.undo(run_id).startswith("Undone:"), "and can be undone again"


def test_a_name_the_person_rebound_since_is_kept_unless_overwriting_it_was_agreed():
    runner = runner_with()
    ns = runner.shell.user_ns
    run_id = run(runner, "a = 1\nb = 2")
    ns["a"] = "the person's"
    assert runner.changed_since(run_id) == ["a"]

    said = runner.undo(run_id)
    assert said == "Undone: removed b. Left as you rebound them since: a."
    assert ns["a"] == "the person's"

    ns["b"] = "the person's too"
    assert runner.changed_since(run_id, redo=True) == ["a", "b"]
    said = runner.redo(run_id, overwrite={"b"})
    assert said == "Redone: bound b again. Left as you rebound them since: a."
    assert visible(ns) == {"a": "the person's", "b": 2}


def test_a_name_already_as_the_undo_would_leave_it_is_no_conflict():
    runner = runner_with()
    ns = runner.shell.user_ns
    run_id = run(runner, "made = 1")
    del ns["made"]  # the person deleted it: the undo would do the same
    assert runner.changed_since(run_id) == []
    assert runner.undo(run_id) == "Nothing to undo."
