"""`%agent undo` takes back the latest turn: its cells and its bindings, newest first, never over the person's edits."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from ..cells_support import NBOP_TOOL, SETUP, op, printed
from ..frontend import FakeExtension
from ..test_undo_everything import answering

pytestmark = pytest.mark.timeout(120)

BIND = {"tool_calls": [{"name": "python", "input": {"code": "made = 5", "description": "bind made"}}]}
TURN = [op("insert", cells=[{"source": "a = 1"}], after=None),
        op("insert", cells=[{"source": "b = 2"}], after=None),
        op("replace", cell_id="c0", source="x = 100", cell_type=None),
        op("delete", cell_ids=["c1"]),
        BIND,
        {"text": "Changed things."}]


def undo(fe, args: str = "") -> str:
    return printed(fe, f"%agent undo {args}".strip())


def test_undo_takes_back_the_whole_turn_and_leaves_a_cell_the_person_changed(kernel):
    ext = FakeExtension(["x = 1", "y = 2", "z = 3", "%%agent\nchange things"])
    ext.cell("c1").outputs = [{"output_type": "stream", "name": "stdout", "text": "two\n"}]
    ext.cell("c1").execution_count = 7
    fe = kernel(TURN, permission={"*": "allow"}, render_views=False, extension=ext)
    printed(fe, SETUP)
    printed(fe, NBOP_TOOL)
    assert fe.execute_cell("c3")["status"] == "ok"
    a, b = ext.ids()[3:5]
    assert [ext.source(i) for i in ext.ids()] == ["x = 100", "z = 3", "%%agent\nchange things", "a = 1", "b = 2"]
    assert printed(fe, "print(made)") == "5"
    ext.cell(b).source = "b = 'the person edited this'"

    asked = answering(fe, "%agent undo", "Keep mine", expected=1)  # asked about, as a file is
    text = "\n".join(line for line in asked.strip().splitlines() if not line.startswith("VBox("))
    ids = ext.ids()
    assert [ext.source(i) for i in ids] == ["x = 1", "y = 2", "z = 3", "%%agent\nchange things",
                                            "b = 'the person edited this'"]
    restored = ext.cell(ids[1])
    assert restored.outputs[0]["text"] == "two\n" and restored.execution_count == 7
    assert text == ("Took out the cell this run inserted.\nPut back the cell this run deleted.\n"
                    "Restored the cell this run edited.\nUnbound made.\n"
                    "Kept your version of the cell you edited after this run."), (a, text)
    assert printed(fe, "print('made' in globals())") == "False"
    assert undo(fe) == "There is no agent change to the namespace left to undo.", "the turn was taken back once"


def test_undo_of_one_run_keeps_the_turns_cells_and_the_turn_undo_skips_that_run(kernel):
    ext = FakeExtension(["x = 1", "%%agent\nchange things"])
    fe = kernel([op("replace", cell_id="c0", source="x = 2", cell_type=None), BIND, {"text": "Done."}],
                permission={"*": "allow"}, render_views=False, extension=ext)
    printed(fe, SETUP)
    printed(fe, NBOP_TOOL)
    assert fe.execute_cell("c1")["status"] == "ok"
    run_id = printed(fe, "print(next(iter(agent.workspace().kernel.live.records)))")
    assert undo(fe, run_id) == "Undone: removed made."
    assert ext.source("c0") == "x = 2"
    assert undo(fe) == "Restored the cell this run edited."
    assert ext.source("c0") == "x = 1"


def test_a_headless_turn_is_undone_in_the_file_back_to_the_same_bytes(kernel, tmp_path: Path):
    path = tmp_path / "analysis.ipynb"
    nb = nbformat.v4.new_notebook()
    for i, source in enumerate(["x = 1", "y = 2", "z = 3", "%%agent\nchange things"]):
        nb.cells.append(nbformat.v4.new_code_cell(source, id=f"c{i}"))
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="two\n")]
    nbformat.write(nb, path)
    original = path.read_bytes()
    fe = kernel(TURN[:4] + TURN[5:], permission={"*": "allow"}, render_views=False,
                env={"OPENCODE_NB_HEADLESS": "1", "OPENCODE_NB_NOTEBOOK": str(path)})
    printed(fe, NBOP_TOOL)
    assert fe.run("%%agent\nchange things")["content"]["status"] == "ok"
    assert path.read_bytes() != original
    text = undo(fe)
    assert "Put back the cell this run deleted." in text and "Kept" not in text, text
    assert path.read_bytes() == original


def test_undo_run_where_it_cannot_be_awaited_still_reports_in_its_cell(kernel):
    ext = FakeExtension(["x = 1", "%%agent\nchange it"])
    fe = kernel([op("replace", cell_id="c0", source="x = 2", cell_type=None), {"text": "Done."}],
                permission={"*": "allow"}, render_views=False, extension=ext)
    printed(fe, SETUP)
    printed(fe, NBOP_TOOL)
    assert fe.execute_cell("c1")["status"] == "ok"
    msg_id = fe.execute("def f():\n    get_ipython().run_line_magic('agent', 'undo')\nf()")
    fe.wait_for(lambda: "Restored the cell this run edited." in fe.text(msg_id), what="the undo's report")
    assert ext.source("c0") == "x = 1"


def test_a_deleted_first_cell_comes_back_first(kernel):
    ext = FakeExtension(["import os", "y = 2", "%%agent\ndrop the import"])
    fe = kernel([op("delete", cell_ids=["c0"]), {"text": "Dropped it."}], permission={"*": "allow"},
                render_views=False, extension=ext)
    printed(fe, SETUP)
    printed(fe, NBOP_TOOL)
    assert fe.execute_cell("c2")["status"] == "ok"
    assert [ext.source(i) for i in ext.ids()] == ["y = 2", "%%agent\ndrop the import"]

    undo(fe)
    assert [ext.source(i) for i in ext.ids()] == ["import os", "y = 2", "%%agent\ndrop the import"]
