"""A page reloaded before the notebook was saved has no cell for the prompt that is running: the kernel shows the
run again in a new cell at the end, with its asks, and a notification names what it waits for, so answering it
lets the run (and the busy kernel) finish."""

from __future__ import annotations

from typing import Any

import pytest

from .frontend import CAPABILITIES, WIDGET_VIEW, FakeExtension, FakeFrontend
from .test_extension import SAY_HI
from .test_run_lifecycle import connected

pytestmark = pytest.mark.timeout(90)


def requests(ext: FakeExtension, action: str) -> list[dict[str, Any]]:
    with ext.lock:
        return [r for r in ext.requests if r["action"] == action]


def reload_without_the_cell(fe: FakeFrontend, ext: FakeExtension, cell_id: str) -> None:
    """The page reloads the notebook as last saved, which never had that cell, and says hello anew."""
    with ext.lock:
        del ext.nb.cells[ext._index(cell_id)]
    fe.open_comm()


def test_a_run_whose_cell_the_reloaded_page_lacks_is_shown_in_a_new_cell_and_answering_its_ask_finishes_it(kernel):
    ext = FakeExtension(["x = 1", "%%agent\nsay hi please"], capabilities=[*CAPABILITIES, "notify"])
    fe = kernel(SAY_HI, extension=ext)
    connected(fe)
    cell = fe.execute_cell_async("c1")
    allow = fe.wait_button("Allow once")

    reload_without_the_cell(fe, ext, "c1")
    [inserted] = fe.wait_for(lambda: requests(ext, "insert_cells"), what="a new cell for the run")
    new_id = ext.ids()[-1]
    assert inserted["after"] is None and ext.ids() == ["c0", new_id], "at the end of the notebook"
    first_line = ext.source(new_id).splitlines()[0]
    assert first_line == "# Shown again after a reload: the run of the prompt “say hi please”."
    fe.wait_for(lambda: ext.cell(new_id).outputs, what="the live view in the new cell")
    [live] = ext.cell(new_id).outputs
    model_id = live["data"][WIDGET_VIEW]["model_id"]
    assert fe.models[model_id]["_model_name"] == "VBoxModel", "the live view, asks and all"

    [note] = fe.wait_for(lambda: requests(ext, "notify"), what="the notification")
    assert note["cell_id"] == new_id and note["kind"] == "warning"
    assert note["message"] == ("The run of “say hi please” waits for your answer (bash: echo hi): it is shown again "
                               "in a new cell.")

    fe.click(allow)
    assert fe.done(cell)["content"]["status"] == "ok", "the busy cell ends once the ask is answered"
    fe.wait_for(lambda: "Done: it printed hi." in str(ext.cell(new_id).outputs), what="the transcript in the new cell")
    [shown] = ext.cell(new_id).outputs
    assert WIDGET_VIEW not in shown["data"] and "ocnb-transcript" in shown["data"]["text/html"]
    assert fe.text(fe.run_id("print('idle again')")).strip() == "idle again"


def test_a_run_whose_cell_the_reloaded_page_has_is_handed_to_that_cell_and_no_cell_is_added(kernel):
    ext = FakeExtension(["%%agent\nsay hi please"], capabilities=[*CAPABILITIES, "notify"])
    fe = kernel(SAY_HI, extension=ext)
    connected(fe)
    cell = fe.execute_cell_async("c0")
    allow = fe.wait_button("Allow once")
    fe.open_comm()
    fe.wait_for(lambda: ext.cell("c0").outputs, what="the live view handed to the cell")
    fe.click(allow)
    assert fe.done(cell)["content"]["status"] == "ok"
    fe.wait_for(lambda: "Done: it printed hi." in str(ext.cell("c0").outputs), what="the transcript")
    assert not requests(ext, "insert_cells") and not requests(ext, "notify")


def test_a_page_that_cannot_notify_still_gets_the_run_in_a_new_cell(kernel):
    ext = FakeExtension(["%%agent\nsay hi please"])
    fe = kernel(SAY_HI, extension=ext)
    connected(fe)
    cell = fe.execute_cell_async("c0")
    allow = fe.wait_button("Allow once")
    reload_without_the_cell(fe, ext, "c0")
    fe.wait_for(lambda: ext.ids() and ext.cell(ext.ids()[0]).outputs, what="the live view in a new cell")
    fe.click(allow)
    assert fe.done(cell)["content"]["status"] == "ok"
    new_id = ext.ids()[0]
    fe.wait_for(lambda: "Done: it printed hi." in str(ext.cell(new_id).outputs), what="the transcript")
    assert not requests(ext, "notify")
