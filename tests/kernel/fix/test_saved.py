"""An error this kernel did not see (a notebook reopened on a fresh kernel, a cell run before `%load_ext`): the
cell's saved error output becomes the failure, its traceback as text, and the context says where it is from;
`%agent fix` alone takes this kernel's last failure first, the notebook's last error cell only when there is none."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
import pandas as pd
import pytest
from IPython.core.error import UsageError

from opencode_nb.kernel.fix.context import context_text
from opencode_nb.kernel.fix.failures import FailureLog
from opencode_nb.kernel.fix.saved import LAST_NOTE, TRACE_CHARS, adopt_saved, trace_text
from opencode_nb.kernel.notebook.filecells import FileCells

LOAD = "import pandas as pd\nsales = pd.DataFrame({'amount': [1.5, 2.5], 'city': ['Oslo', 'Rome']})"
FAILS = "total = sales['revenue'].sum()"


@dataclass
class Host:
    """What reading a saved failure and its context use of the notebook agent."""

    shell: Any
    failures: FailureLog
    notebook: Any

    async def aworkspace(self) -> None:
        return None


def error_output(shell: Any, source: str) -> dict[str, Any]:
    """The error output ipykernel saves for `source`: the coloured traceback IPython hands to `_showtraceback`,
    the hook ipykernel's shell overrides to send it."""
    shown: list[tuple[str, str, list[str]]] = []
    shell._showtraceback = lambda etype, evalue, stb: shown.append((etype.__name__, str(evalue), stb))
    try:
        shell.run_cell(source, store_history=False)
    finally:
        del shell._showtraceback
    [(name, value, lines)] = shown
    return nbformat.v4.new_output("error", ename=name, evalue=value, traceback=lines)


def saved_notebook(path: Path, cells: list[tuple[str, str, list[dict[str, Any]]]]) -> FileCells:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source, id=cell_id, outputs=outputs, execution_count=i + 1)
                for i, (cell_id, source, outputs) in enumerate(cells)]
    nbformat.write(nb, path)
    return FileCells(path)


async def test_a_cell_named_by_id_is_taken_from_its_saved_error_output_with_a_note(shell: Any, tmp_path: Path):
    shell.run_cell(LOAD)
    saved = error_output(shell, FAILS)
    assert any("\x1b[" in line for line in saved["traceback"]), "IPython colours it, as a saved notebook keeps it"
    shell.user_ns["big"] = pd.DataFrame(np.ones((1000, 4)))
    host = Host(shell, FailureLog(), saved_notebook(tmp_path / "a.ipynb", [("load1", LOAD, []),
                                                                            ("fail2", FAILS, [saved])]))
    with pytest.raises(UsageError, match="Cell fail2 has not raised an error"):
        host.failures.find("fail2")
    await adopt_saved(host, ["fail2"], "explain")  # type: ignore[arg-type]
    failure = host.failures.find("fail2")
    assert (failure.cell_id, failure.count, failure.name, failure.value) == ("fail2", 2, "KeyError", "'revenue'")
    assert failure.source == FAILS and failure.trace.frames == ()
    assert failure.saved is not None and "\x1b" not in failure.saved
    assert "total = sales['revenue'].sum()" in failure.saved and failure.saved.endswith("KeyError: 'revenue'")
    assert not failure.saved.startswith("---"), "IPython's rule of dashes is not part of the error"

    text = await context_text(host, failure)  # type: ignore[arg-type]
    assert "## The error (from the cell's saved output: this kernel did not see the cell fail" in text
    assert failure.saved in text
    assert "may differ from what they were when the cell failed" in text
    assert "sales: pandas DataFrame, 2 rows × 2 columns" in text and "big" not in text
    assert "The failing cell is #2 of 2." in text
    await adopt_saved(host, ["[2]"], "explain")  # type: ignore[arg-type]
    assert host.failures.find("[2]") == failure, "In [2]: the saved cell with that execution count"


async def test_fix_alone_takes_this_kernels_last_failure_before_the_notebooks_last_error_cell(shell: Any,
                                                                                             tmp_path: Path):
    first, second = error_output(shell, "1 / 0"), error_output(shell, "{}['k']")
    agent_error = error_output(shell, "raise RuntimeError('an agent failed')")
    notebook = saved_notebook(tmp_path / "b.ipynb", [("a1", "1 / 0", [first]), ("b2", "{}['k']", [second]),
                                                      ("c3", "%%agent\nsay hi", [agent_error]), ("d4", "x = 1", [])])
    host = Host(shell, FailureLog(), notebook)
    await adopt_saved(host, [], "fix")  # type: ignore[arg-type]
    failure = host.failures.find(None)
    assert (failure.cell_id, failure.name, failure.note) == ("b2", "KeyError", LAST_NOTE), "nearest the end"
    assert LAST_NOTE in await context_text(host, failure)  # type: ignore[arg-type]

    host.failures.register(shell)
    try:
        shell.run_cell("int('seven')", store_history=True, cell_id="e5")
    finally:
        host.failures.unregister()
    await adopt_saved(host, [], "fix")  # type: ignore[arg-type]
    failure = host.failures.find(None)
    assert (failure.cell_id, failure.name, failure.saved) == ("e5", "ValueError", None), "what this kernel saw"

    host.failures.register(shell)
    try:
        shell.run_cell("int(7)", store_history=True, cell_id="e5")
        shell.run_cell("{}.get('k')", store_history=True, cell_id="b2")  # the file, saved before, still shows it
    finally:
        host.failures.unregister()
    await adopt_saved(host, [], "fix")  # type: ignore[arg-type]
    assert host.failures.find(None).cell_id == "a1", "the last error cell this kernel did not see run"


async def test_a_cell_without_an_error_output_or_run_cleanly_here_is_not_taken(shell: Any, tmp_path: Path):
    stale = error_output(shell, "1 / 0")
    notebook = saved_notebook(tmp_path / "c.ipynb", [("a1", "x = 1", []), ("b2", "y = 2", [stale]),
                                                      ("c3", "%agent explain a1", [stale])])
    host = Host(shell, FailureLog(), notebook)
    await adopt_saved(host, ["a1"], "fix")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="the notebook shows no error output under it"):
        host.failures.find("a1")
    await adopt_saved(host, ["c3"], "fix")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="Cell c3 has not raised an error"):
        host.failures.find("c3")  # an agent's cell: its error is ours

    host.failures.register(shell)
    try:
        shell.run_cell("y = 2", store_history=True, cell_id="b2")  # ran cleanly here: the file's output is stale
    finally:
        host.failures.unregister()
    await adopt_saved(host, ["b2"], "fix")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="Cell b2 has not raised an error"):
        host.failures.find("b2")
    await adopt_saved(host, ["2"], "fix")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"In \[2\] did not raise"):
        host.failures.find("2")


async def test_an_unreadable_notebook_leaves_the_logs_own_answer(shell: Any):
    class Unreachable:
        async def read(self, cell_ids: Any = None, **_: Any) -> Any:
            raise RuntimeError("The notebook cannot be reached.")

    host = Host(shell, FailureLog(), Unreachable())
    await adopt_saved(host, [], "explain")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="No cell has raised an error in this kernel"):
        host.failures.find(None)


def test_a_saved_traceback_keeps_its_end_and_always_closes_with_the_error_line():
    cut = trace_text({"traceback": ["\x1b[0;31mCell In[3], line 1\x1b[0m", "----> 1 d['x']", "…[400 more characters]"]},
                     "KeyError", "'x'")
    assert cut == "Cell In[3], line 1\n----> 1 d['x']\n…[400 more characters]\nKeyError: 'x'"
    long = trace_text({"traceback": [f"  frame {i}" for i in range(3000)] + ["KeyError: 'x'"]}, "KeyError", "'x'")
    assert len(long) < TRACE_CHARS + 200 and long.endswith("  frame 2999\nKeyError: 'x'")
    assert "characters of the traceback left out" in long and long.startswith("  frame 0")
