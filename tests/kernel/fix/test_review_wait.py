"""A Fix whose proposal the page shows in place waits in its cell until the person decides, in a real kernel with a
page that shows pending changes: Accept applies and reruns the failed cell while the Fix cell still runs, Reject
leaves it, each decision is said in the Fix cell, and an interrupt ends the wait with the change still pending."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ..cells_support import printed
from ..frontend import CAPABILITIES, FakeExtension

pytestmark = pytest.mark.timeout(150)

SETUP = "import pandas as pd\nsales = pd.DataFrame({'amount': [12.5, 30.0, 7.25]})"
FAILING = "total = sales['revenue'].sum()\nprint('total:', total)"
FIXED = "total = sales['amount'].sum()\nprint('total:', total)"
SCRIPT = [{"tool_calls": [{"name": "notebook_edit", "input": {"action": "replace", "cell_id": "c1",
                                                              "source": FIXED}}]},
          {"text": "The frame has `amount`, not `revenue`."}]
WAITING = "Waiting for your review of change 1 in cell [c1]: Accept or Reject it there."


def proposed(kernel: Any) -> tuple[Any, FakeExtension, str]:
    """The failed cell and a Fix cell that proposed its change and now waits; returns the Fix's request id."""
    ext = FakeExtension([SETUP, FAILING, "%agent fix"], capabilities=[*CAPABILITIES, "show_pending"])
    fe = kernel(SCRIPT, permission={"*": "allow"}, render_views=False, extension=ext)
    fe.wait_for(lambda: fe.extension_comms, what="the kernel's comm")
    assert fe.execute_cell("c0")["status"] == "ok"
    assert fe.execute_cell("c1")["status"] == "error"
    fe.wait_for(lambda: fe.run("pass")["content"]["status"] == "ok", what="the kernel to take requests again")
    msg_id = fe.execute_cell_async("c2")
    fe.wait_for(lambda: WAITING in fe.text(msg_id), what="the Fix cell to say it waits")
    time.sleep(0.5)
    assert fe.reply_or_none(msg_id) is None, "the Fix cell waits for the person"
    assert "The frame has `amount`" in fe.text(msg_id), "the model's turn ended before the wait"
    return fe, ext, msg_id


def decide(fe: Any, accept: bool) -> None:
    fe.send_comm(fe.extension_comms[-1], {"request_id": f"page_{accept}", "action": "decide_pending", "n": 1,
                                          "accept": accept, "rerun": True})


def test_accept_in_the_cell_reruns_it_while_the_fix_cell_waits_and_the_fix_cell_then_ends(kernel: Any):
    fe, ext, msg_id = proposed(kernel)
    assert ext.source("c1") == FAILING
    decide(fe, True)
    reply = fe.done(msg_id)
    assert reply["content"]["status"] == "ok"
    said = fe.text(msg_id)
    assert said.index(WAITING) < said.index(
        "Accepted change 1: replaced the source of cell [c1]; it ran without an error.")
    assert ext.source("c1") == FIXED
    assert "total: 49.75" in str(ext.cell("c1").outputs) and "KeyError" not in str(ext.cell("c1").outputs), \
        "the rerun's outputs replaced the error"
    assert printed(fe, "print(total)") == "49.75"


def test_reject_ends_the_wait_and_leaves_the_cell(kernel: Any):
    fe, ext, msg_id = proposed(kernel)
    decide(fe, False)
    assert fe.done(msg_id)["content"]["status"] == "ok"
    assert "Rejected change 1 to cell [c1]; the notebook was not changed." in fe.text(msg_id)
    assert ext.source("c1") == FAILING


def test_an_interrupt_ends_the_wait_and_the_change_stays_pending(kernel: Any):
    fe, ext, msg_id = proposed(kernel)
    fe.interrupt()
    reply = fe.done(msg_id)
    assert reply["content"]["status"] == "error"
    assert "Stopped waiting for your review: change 1 still pending." in fe.text(msg_id)
    fe.wait_for(lambda: fe.run("pass")["content"]["status"] == "ok", what="the kernel to take requests again")
    assert printed(fe, "%agent pending").startswith("Change 1: replace cell [c1]")
    assert ext.source("c1") == FAILING


def test_without_a_page_that_shows_changes_in_place_the_fix_cell_does_not_wait(kernel: Any):
    ext = FakeExtension([SETUP, FAILING, "%agent fix"])
    fe = kernel(SCRIPT, permission={"*": "allow"}, render_views=False, extension=ext)
    fe.wait_for(lambda: fe.extension_comms, what="the kernel's comm")
    assert fe.execute_cell("c0")["status"] == "ok"
    assert fe.execute_cell("c1")["status"] == "error"
    fe.wait_for(lambda: fe.run("pass")["content"]["status"] == "ok", what="the kernel to take requests again")
    msg_id = fe.execute_cell_async("c2")
    assert fe.done(msg_id)["content"]["status"] == "ok"
    said = fe.text(msg_id)
    assert "Waiting for your review" not in said and "%agent accept 1" in said
