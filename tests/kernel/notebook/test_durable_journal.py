"""The cells a turn inserted are kept in the project's store by cell id, so a new kernel for the same notebook
(after a restart) still takes them back with `%agent undo --to N`, and puts them back with `%agent redo`.
What it cannot take back (a cell the person deleted meanwhile, names bound in the old kernel) is named in
the report, never skipped in silence. A store file from before the cells were kept still opens."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from opencode_nb.session.store import SCHEMA_VERSION, SessionStore
from opencode_nb.session.store.schema import MIGRATIONS

from ..cells_support import NBOP_TOOL, SETUP, op, printed
from ..frontend import FakeExtension, FakeFrontend
from ..test_undo_everything import answering

pytestmark = pytest.mark.timeout(240)

TURN = [
    {"tool_calls": [{"name": "python", "input": {"code": "made_by_agent = 41", "description": "bind a name"}}]},
    op("insert", cells=[{"source": "df.plot()"}, {"source": "made_by_agent + 1"}], after=None),
    {"text": "Done."},
]
PERSON = ["x = 1", "%%agent\nadd two cells"]


def first_kernel(kernel: Any, env: dict[str, str] | None = None) -> tuple[FakeFrontend, FakeExtension]:
    ext = FakeExtension(PERSON)
    fe = kernel(TURN, permission={"*": "allow"}, render_views=False, extension=ext, env=env)
    printed(fe, SETUP)
    printed(fe, NBOP_TOOL)
    assert fe.execute_cell("c1")["status"] == "ok"
    assert sources(ext) == [*PERSON, "df.plot()", "made_by_agent + 1"]
    return fe, ext


def restarted(kernel: Any, fe: FakeFrontend, ext: FakeExtension) -> tuple[FakeFrontend, FakeExtension]:
    """The same notebook in a new kernel: the old one is gone, the page keeps its cells (ids included)."""
    fe.close()
    carried = FakeExtension([{"id": c.id, "source": c.source, "cell_type": c.cell_type} for c in ext.nb.cells],
                            path=ext.path)
    return kernel([], permission={"*": "allow"}, render_views=False, extension=carried), carried


def sources(ext: FakeExtension) -> list[str]:
    return [ext.source(i) for i in ext.ids()]


def test_after_a_restart_undo_to_a_turn_takes_back_the_cells_it_inserted_and_redo_puts_them_back(kernel):
    fe, ext = first_kernel(kernel)
    fe2, ext2 = restarted(kernel, fe, ext)

    report = printed(fe2, "%agent undo --to 1")
    assert sources(ext2) == PERSON, report
    assert "Took out the 2 cells this run inserted." in report
    assert "made_by_agent" in report and "before the restart" in report, "names of the old kernel are named as gone"

    redone = printed(fe2, "%agent redo")
    assert sources(ext2) == [*PERSON, "df.plot()", "made_by_agent + 1"], redone
    again = printed(fe2, "%agent undo")
    assert sources(ext2) == PERSON, again


def test_an_undo_made_before_the_restart_is_redone_after_it(kernel):
    fe, ext = first_kernel(kernel)
    printed(fe, "%agent undo")
    assert sources(ext) == PERSON
    fe2, ext2 = restarted(kernel, fe, ext)

    redone = printed(fe2, "%agent redo")
    assert sources(ext2) == [*PERSON, "df.plot()", "made_by_agent + 1"], redone
    assert "Put back the 2 cells this run inserted." in redone


def test_a_cell_the_person_deleted_before_the_undo_is_named_in_the_report(kernel):
    fe, ext = first_kernel(kernel)
    fe2, ext2 = restarted(kernel, fe, ext)
    plot = next(i for i in ext2.ids() if ext2.source(i) == "df.plot()")
    ext2.nb.cells = [c for c in ext2.nb.cells if c.id != plot]  # the person deleted it on the page

    report = printed(fe2, "%agent undo --to 1")
    assert sources(ext2) == PERSON, report
    assert f"Could not take back cell 'df.plot()' ({plot}): it is no longer in the notebook." in report
    assert "Took out the cell this run inserted." in report


@pytest.mark.parametrize("answer", ["Keep mine", "Overwrite my change"])
def test_a_cell_the_person_edited_before_the_undo_is_asked_about_as_a_file_is(kernel, answer: str):
    fe, ext = first_kernel(kernel)
    fe2, ext2 = restarted(kernel, fe, ext)
    plot = next(i for i in ext2.ids() if ext2.source(i) == "df.plot()")
    ext2.cell(plot).source = "df.plot(kind='bar')  # mine"

    report = answering(fe2, "%agent undo --to 1", answer, expected=1)
    if answer == "Keep mine":
        assert sources(ext2) == [*PERSON, "df.plot(kind='bar')  # mine"], report
        assert "Kept your version of the cell you edited after this run." in report
    else:
        assert sources(ext2) == PERSON, report


def test_an_undo_after_a_restart_without_a_page_names_the_cells_it_could_not_reach(kernel):
    server = {"JPY_SESSION_NAME": "work/analysis.ipynb"}  # the server names the notebook to both kernels
    fe, _ = first_kernel(kernel, env=server)
    fe.close()
    fe2 = kernel([], permission={"*": "allow"}, render_views=False, env=server)  # no extension answers
    report = printed(fe2, "%agent undo --to 1")
    assert report.startswith("Could not take back cell "), report
    assert "'df.plot()' (" in report and "'made_by_agent + 1' (" in report, "each cell is named by its first line"


def test_a_store_file_from_before_cells_were_kept_still_opens_and_keeps_its_sessions(tmp_path: Path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    for step in MIGRATIONS[:3]:
        for statement in step:
            db.execute(statement)
    db.execute("PRAGMA user_version = 3")
    db.execute("INSERT INTO sessions (id, parent_id, directory, updated_at, data) VALUES ('s1', NULL, '/p', 1, '{}')")
    db.commit()
    db.close()

    with SessionStore(path) as store:
        assert store.path == path
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("SELECT id FROM sessions").fetchall() == [("s1",)]
    assert db.execute("SELECT COUNT(*) FROM notebook_turns").fetchone()[0] == 0
    db.close()
