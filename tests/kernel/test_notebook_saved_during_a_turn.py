"""In a real kernel: the notebook the person (or JupyterLab's autosave) saves while a turn runs is theirs. The
turn's listing names only what its tools wrote, `%agent diff` shows another notebook the agent rewrote as cells
(never JSON) and says the saved one is not the agent's, and `%agent undo` leaves the save as it was made."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import nbformat
import pytest

from .cells_support import printed
from .frontend import FakeExtension

pytestmark = pytest.mark.timeout(180)

OWN = "analysis.ipynb"


def notebook(*sources: str) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    return nbformat.writes(nb)


REPORT_BEFORE = notebook("import pandas as pd", "df = pd.read_csv('a.csv')", "df.head()")
REPORT_AFTER = notebook("import pandas as pd", "df = pd.read_csv('b.csv')\ndf = df.dropna()", "df.head()")
SAVED = notebook("x = 1", "print('saved-by-lab')")
TURN = [
    {"tool_calls": [{"name": "bash", "input": {"description": "change a.py while the notebook is saved", "command":
        "echo started > a.py; for i in $(seq 400); do grep -q saved-by-lab analysis.ipynb && break; sleep 0.05; "
        "done; echo 'x = 2' > a.py"}}]},
    {"tool_calls": [{"name": "write", "input": {"path": "report.ipynb", "content": REPORT_AFTER}}]},
    {"text": "Done."},
]


def save_when_started(project: Path) -> threading.Thread:
    def run() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if (project / "a.py").exists() and "started" in (project / "a.py").read_text():
                (project / OWN).write_text(SAVED)
                return
            time.sleep(0.02)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_the_persons_save_during_a_turn_is_not_listed_diffed_or_undone_as_the_agents(kernel, tmp_path):
    files = {"a.py": "x = 1\n", OWN: notebook("x = 1"), "report.ipynb": REPORT_BEFORE}
    ext = FakeExtension(["%%agent\nchange a.py and the report"], path=OWN)
    fe = kernel(TURN, permission={"*": "allow"}, render_views=False, extension=ext, files=files)
    project = tmp_path / "project"
    saver = save_when_started(project)
    assert fe.execute_cell("c0", timeout=90)["status"] == "ok"
    saver.join(5)
    assert (project / OWN).read_text() == SAVED and (project / "a.py").read_text() == "x = 2\n"

    listed = printed(fe, "%agent checkpoints")
    assert "a.py (+1 -1)" in listed and "report.ipynb" in listed, listed
    assert OWN not in listed.replace("report.ipynb", ""), listed

    diff = printed(fe, "%agent diff 1")
    assert "+x = 2" in diff and "cell 2 (code) changed: df = pd.read_csv('b.csv')" in diff, diff
    assert "-df = pd.read_csv('a.csv')" in diff and "+df = df.dropna()" in diff
    assert '"cell_type"' not in diff and '"source"' not in diff
    assert f"Not the agent's, so not shown (saved while the turn ran): {OWN}" in diff

    report = printed(fe, "%agent undo")
    assert (project / "a.py").read_text() == "x = 1\n", report
    assert (project / "report.ipynb").read_text() == REPORT_BEFORE, report
    assert (project / OWN).read_text() == SAVED, "undo never reverts the person's save"
    assert OWN not in report.replace("report.ipynb", ""), report
