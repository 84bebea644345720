"""What a turn changed is what its tools wrote: the notebook JupyterLab saves while the agent runs, and a file
the person saves between two tool calls, are the person's, so no listing or diff names them as the turn's and
undo leaves them as the person saved them.

The model is scripted and the tools are real; the "save" is the test writing the file from another thread at the
moment the turn is running (during a shell command, or between two tool calls), as JupyterLab's autosave does.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import nbformat

from opencode_nb.provider import Scripted

from .conftest import bash, open_workspace, write

NOTEBOOK = "analysis.ipynb"


def notebook(*sources: str) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    return nbformat.writes(nb)


def save_when(root: Path, ready: str, content: str) -> threading.Thread:
    """Save the notebook once `ready` appears in a.py (the shell command is running), as the front end would."""
    def run() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if (root / "a.py").exists() and ready in (root / "a.py").read_text():
                (root / NOTEBOOK).write_text(content)
                return
            time.sleep(0.02)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


WAIT_FOR_SAVE = ("echo started > a.py; for i in $(seq 400); do grep -q saved-by-lab analysis.ipynb && break; "
                 "sleep 0.05; done; echo 'x = 2' > a.py")


async def test_a_notebook_saved_during_a_tool_call_is_not_the_turns_and_undo_leaves_it(project, tmp_path):
    (project / "a.py").write_text("x = 1\n")
    (project / NOTEBOOK).write_text(notebook("x = 1"))
    saved = notebook("x = 1", "print('saved-by-lab')")
    ws, _ = open_workspace(project, tmp_path / "data", [bash(WAIT_FOR_SAVE), {"text": "ok"}])
    session = ws.sessions.create(notebook=NOTEBOOK)
    saver = save_when(project, "started", saved)
    await asyncio.wait_for(ws.prompt(session.id, "change a.py"), 30)
    saver.join(5)
    assert (project / NOTEBOOK).read_text() == saved and (project / "a.py").read_text() == "x = 2\n"

    [turn] = ws.checkpoints.turns(session.id)
    assert [f.path for f in turn.files] == ["a.py"] and turn.theirs == [NOTEBOOK]
    diff = ws.checkpoints.diff(session.id)
    assert "+x = 2" in diff and NOTEBOOK not in diff and '"cell_type"' not in diff

    report = await ws.undo(session.id)
    assert (project / "a.py").read_text() == "x = 1\n", report.text()
    assert (project / NOTEBOOK).read_text() == saved, "the person's save stays as they saved it"
    assert report.restored == ["a.py"] and NOTEBOOK not in report.text()
    ws.close()


async def test_a_file_saved_between_two_tool_calls_is_named_as_the_persons_not_the_turns(project, tmp_path):
    (project / NOTEBOOK).write_text(notebook("x = 1"))
    saved = notebook("y = 3")
    script = [write("a.py", "x = 1\n"), write("a.py", "x = 2\n"), {"text": "ok"}]

    def respond(request: Any) -> dict[str, Any]:
        if len(script) == 2:  # the model "thinks" after the first write: the person saves two files
            (project / NOTEBOOK).write_text(saved)
            (project / "mine.txt").write_text("the person's\n")
        return script.pop(0)

    ws, _ = open_workspace(project, tmp_path / "data", [])
    ws.providers.register("scripted", Scripted(respond=respond))
    session = ws.sessions.create(notebook=NOTEBOOK)
    await asyncio.wait_for(ws.prompt(session.id, "write a.py"), 30)

    [turn] = ws.checkpoints.turns(session.id)
    assert [f.path for f in turn.files] == ["a.py"]
    assert sorted(turn.theirs) == [NOTEBOOK, "mine.txt"]
    assert "mine.txt" not in ws.checkpoints.diff(session.id)
    report = await ws.undo(session.id)
    assert not (project / "a.py").exists() and report.removed == ["a.py"]
    assert (project / NOTEBOOK).read_text() == saved
    assert (project / "mine.txt").read_text() == "the person's\n"
    ws.close()


async def test_a_notebook_the_write_tool_wrote_is_the_turns_and_its_diff_shows_cells(project, tmp_path):
    (project / NOTEBOOK).write_text(notebook("import pandas as pd", "df = pd.read_csv('a.csv')", "df.head()"))
    new = notebook("import pandas as pd", "df = pd.read_csv('b.csv')\ndf = df.dropna()", "df.describe()")
    ws, _ = open_workspace(project, tmp_path / "data", [write(NOTEBOOK, new), {"text": "ok"}])
    session = ws.sessions.create(notebook=NOTEBOOK)
    await asyncio.wait_for(ws.prompt(session.id, "clean the data"), 30)

    [turn] = ws.checkpoints.turns(session.id)
    assert [f.path for f in turn.files] == [NOTEBOOK] and turn.theirs == []
    diff = ws.checkpoints.diff(session.id)
    assert "cell 2 (code) changed: df = pd.read_csv('b.csv')" in diff, diff
    assert "-df = pd.read_csv('a.csv')" in diff and "+df = df.dropna()" in diff
    assert '"cell_type"' not in diff and '"source"' not in diff
    [(tool, step)] = ws.checkpoints.steps(session.id, 1)
    assert tool == "write" and '"cell_type"' not in step and "cell 3 (code) changed" in step
    ws.close()
