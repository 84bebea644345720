"""The record of cells that raised: which failure `%agent fix [CELL]` means, and what is not kept."""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.error import UsageError

from opencode_nb.kernel.fix.failures import PER_CELL, FailureLog


def test_fix_alone_means_the_last_cell_that_raised_and_has_not_run_cleanly_since(shell: Any):
    shell.run_cell("1 / 0", store_history=True, cell_id="a1")
    shell.run_cell("{}['k']", store_history=True, cell_id="b2")
    assert shell.failures.last().cell_id == "b2"
    shell.run_cell("ok = 1", store_history=True, cell_id="b2")  # the person fixed it by hand
    failure = shell.failures.find(None)
    assert (failure.cell_id, failure.name, failure.value) == ("a1", "ZeroDivisionError", "division by zero")
    assert failure.label == f"cell [a1] (In [{failure.count}])"


def test_a_cell_is_named_by_its_id_or_by_its_execution_count(shell: Any):
    shell.run_cell("undefined_name_here", store_history=True, cell_id="c3")
    failure = shell.failures.find("c3")
    assert failure.name == "NameError"
    assert shell.failures.find(str(failure.count)) == failure == shell.failures.find(f"[{failure.count}]")
    assert shell.failures.cell_id_of(failure.count) == "c3"


def test_a_cell_with_no_failure_says_what_to_do(shell: Any):
    shell.run_cell("fine = 2", store_history=True, cell_id="d4")
    with pytest.raises(UsageError, match="Cell d4 has not raised an error.*Run the cell so it fails again"):
        shell.failures.find("d4")
    shell.run_cell("1 / 0", store_history=True, cell_id="d4")
    shell.run_cell("fine = 3", store_history=True, cell_id="d4")
    with pytest.raises(UsageError, match="ran without an error after it failed"):
        shell.failures.find("d4")
    with pytest.raises(UsageError, match=r"In \[9999\] did not raise"):
        shell.failures.find("9999")


def test_nothing_failed_is_a_clear_error(ipython: Any):
    with pytest.raises(UsageError, match="No cell has raised an error in this kernel"):
        FailureLog().find(None)


def test_the_agents_own_cells_and_interrupts_are_not_failures_of_the_persons_code(shell: Any):
    shell.run_cell("1 / 0", store_history=True, cell_id="e5")
    shell.run_cell("%agent fix e5\n", store_history=True, cell_id="f6")  # no such magic here: an error
    shell.run_cell("raise KeyboardInterrupt", store_history=True, cell_id="g7")
    assert shell.failures.last().cell_id == "e5"


def test_each_cell_keeps_only_its_last_failures(shell: Any):
    for i in range(PER_CELL + 2):
        shell.run_cell(f"raise ValueError('try {i}')", store_history=True, cell_id="h8")
    kept = shell.failures._failures["id:h8"]
    assert [f.value for f in kept] == [f"try {i}" for i in range(2, PER_CELL + 2)]


def test_without_cell_ids_a_cell_is_known_by_its_text(shell: Any):
    shell.run_cell("raise RuntimeError('no id')", store_history=True)
    failure = shell.failures.last()
    assert failure.cell_id is None and failure.label == f"In [{failure.count}]"
    shell.run_cell("raise RuntimeError('no id')".replace("raise ", "x = "), store_history=True)
    assert shell.failures.last() == failure  # another cell's success does not clear it
