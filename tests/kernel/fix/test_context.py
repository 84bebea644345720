"""What the model is given about a failed cell: the cell, the whole traceback, the variables it reads (and
which cell bound them), the package version for an import error, the cells above within a bound; and nothing
about the variables it does not read."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
import pandas as pd

from opencode_nb.kernel.fix.context import ABOVE_CHARS, context_text
from opencode_nb.kernel.fix.failures import FailureLog
from opencode_nb.kernel.notebook.filecells import FileCells


@dataclass
class Host:
    """What `context_text` reads of the notebook agent: the shell, the failures, the notebook's cells."""

    shell: Any
    failures: FailureLog
    notebook: FileCells


class Tripwire:
    """A value that records any look at it: one the cell does not read must never be looked at."""

    touched = False

    def __getattribute__(self, name: str) -> Any:
        type(self).touched = True
        return object.__getattribute__(self, name)

    def __len__(self) -> int:
        type(self).touched = True
        return 0


def notebook(path: Path, cells: list[tuple[str, str]]) -> FileCells:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source, id=cell_id) for cell_id, source in cells]
    nbformat.write(nb, path)
    return FileCells(path)


def run(shell: Any, cells: list[tuple[str, str]]) -> None:
    for cell_id, source in cells:
        shell.run_cell(source, store_history=True, cell_id=cell_id)


async def test_the_context_has_the_cell_the_traceback_and_the_variables_it_reads(shell: Any, tmp_path: Path):
    cells = [("load1", "import numpy as np\nimport pandas as pd\n"
                       "sales = pd.DataFrame({'amount': [1.5, 2.5, 4.0], 'city': ['Oslo', 'Rome', 'Oslo']})"),
             ("rate2", "rate = 0.2"),
             ("fail3", "net = sales['revenue'] * (1 - rate) + np.log(2) + unknown_thing")]
    run(shell, cells)
    shell.user_ns["big"] = pd.DataFrame(np.ones((1000, 4)), columns=["w", "x", "y", "z"])
    shell.user_ns["tripwire"] = Tripwire()
    text = await context_text(Host(shell, shell.failures, notebook(tmp_path / "a.ipynb", cells)),
                              shell.failures.find("fail3"))
    count = shell.failures.find("fail3").count
    assert f"## The cell that failed: cell [fail3] (In [{count}])\n```python\nnet = sales['revenue']" in text
    assert f"Cell [fail3] (In [{count}]), line 1" in text and text.count("KeyError: 'revenue'") >= 2
    assert "pandas/core/frame.py" in text and "interactiveshell" not in text
    assert "sales: pandas DataFrame, 3 rows × 2 columns" in text and "amount" in text and "Oslo" in text
    assert "(bound last by cell [load1] (In [" in text and "rate: float = 0.2\n(bound last by cell [rate2]" in text
    assert "Read but not defined in the namespace now: unknown_thing" in text
    assert "np:" not in text  # a module's attribute is not the person's data
    assert "big" not in text and "tripwire" not in text and not Tripwire.touched
    assert "The failing cell is #3 of 3." in text and "[cell load1] #1 code" in text


async def test_an_import_error_gives_the_installed_version_of_the_package(shell: Any, tmp_path: Path):
    from importlib.metadata import version

    cells = [("imp1", "from pydantic import NoSuchThingHere")]
    run(shell, cells)
    text = await context_text(Host(shell, shell.failures, notebook(tmp_path / "b.ipynb", cells)),
                              shell.failures.find("imp1"))
    assert f"## Installed\npydantic {version('pydantic')} is installed" in text and "\nPython 3." in text
    assert "ImportError: cannot import name 'NoSuchThingHere' from 'pydantic'" in text


async def test_a_missing_attribute_of_a_module_gives_that_packages_version(shell: Any, tmp_path: Path):
    from importlib.metadata import version

    cells = [("yml1", "import yaml\nyaml.no_such_loader()")]
    run(shell, cells)
    text = await context_text(Host(shell, shell.failures, notebook(tmp_path / "c.ipynb", cells)),
                              shell.failures.find("yml1"))
    assert f"PyYAML {version('PyYAML')} installed (the distribution of module yaml)" in text


async def test_the_cells_above_are_nearest_first_within_the_bound_and_say_what_was_cut(shell: Any, tmp_path: Path):
    filler = [(f"f{i:02d}", f"step_{i} = {i}  # " + "x" * 1500) for i in range(30)]
    cells = [*filler, ("last1", "step_29 / 0")]
    run(shell, cells)
    text = await context_text(Host(shell, shell.failures, notebook(tmp_path / "d.ipynb", cells)),
                              shell.failures.find("last1"))
    above = text[text.index("## The cells above it"):]
    assert "[cell f29] #30 code" in above and "[cell f00]" not in above
    kept = above.count("[cell f")
    assert 0 < kept < 30
    assert f"(cells #1–#{30 - kept} are left out to keep this short; notebook_read shows them)" in above
    assert len(above) < ABOVE_CHARS + 2000


async def test_a_failing_cell_that_is_no_longer_in_the_notebook_is_said(shell: Any, tmp_path: Path):
    run(shell, [("gone1", "1 / 0")])
    text = await context_text(Host(shell, shell.failures, notebook(tmp_path / "e.ipynb", [("other", "x = 1")])),
                              shell.failures.find("gone1"))
    assert "The failing cell is not in the notebook as it is now" in text


async def test_the_context_for_no_cell_is_the_last_failures(shell: Any, tmp_path: Path):
    from opencode_nb.kernel.fix.context import context_for

    cells = [("one1", "1 / 0"), ("two2", "[][3]")]
    run(shell, cells)
    text = await context_for(Host(shell, shell.failures, notebook(tmp_path / "f.ipynb", cells)))
    assert "## The cell that failed: cell [two2]" in text and "IndexError: list index out of range" in text
