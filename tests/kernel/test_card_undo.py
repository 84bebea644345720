"""A finished run's card names its turn, and the page can undo exactly that turn over the comm while the kernel
lives: the run's inserted cells and bindings go, the card learns what was undone, a second undo says it was
already done, and a later run that built on this one must be undone first. What the undo did reads as one
sentence per effect, one a line, the same sentences `%agent undo` prints."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from opencode_nb.kernel.card_undo import RUN_MIME

from .cells_support import NBOP_TOOL, SETUP, op, printed
from .frontend import FakeExtension, FakeFrontend

pytestmark = pytest.mark.timeout(120)

BIND = {"tool_calls": [{"name": "python", "input": {"code": "df2 = 5", "description": "bind df2"}}]}


def run_cell(fe: FakeFrontend, cell_id: str) -> str | None:
    """Run the extension's cell as Shift+Enter does; the turn its transcript names, if it names one."""
    msg_id = fe.execute_cell_async(cell_id)
    assert fe.done(msg_id)["content"]["status"] == "ok", fe.text(msg_id)
    data = [m["content"].get("data", {}) for m in fe.final_outputs(msg_id)]
    named = [d[RUN_MIME] for d in data if RUN_MIME in d]
    assert len(named) <= 1
    if named:
        assert 'class="ocnb-transcript"' in fe.html(msg_id), "the card's HTML stays beside the turn it names"
        return named[0]["turn"]
    return None


def ask(fe: FakeFrontend, action: str, **params: Any) -> dict[str, Any]:
    """Send a request from the page on the extension's comm, as the extension does, and wait for its reply."""
    request_id = f"page_{uuid.uuid4().hex}"
    fe.send_comm(fe.extension_comms[-1], {"request_id": request_id, "action": action, **params})

    def replied() -> dict[str, Any] | None:
        for msg in list(fe.iopub):
            data = msg["content"].get("data") if msg["msg_type"] == "comm_msg" else None
            if isinstance(data, dict) and data.get("reply_to") == request_id:
                return data
        return None

    return fe.wait_for(replied, 30, f"the kernel's reply to {action}")


def state(fe: FakeFrontend, turn: str) -> dict[str, Any]:
    reply = ask(fe, "undo_state", turns=[turn])
    assert reply["ok"] is True
    return reply["states"][turn]


def test_the_card_undoes_its_own_run_and_then_says_what_was_undone(kernel):
    ext = FakeExtension(["x = 1", "%%agent\nmake a cell and a frame"])
    fe = kernel([op("insert", cells=[{"source": "df2.describe()"}], after=None), BIND, {"text": "Made them."}],
                permission={"*": "allow"}, render_views=False, extension=ext)
    printed(fe, SETUP)
    printed(fe, NBOP_TOOL)
    turn = run_cell(fe, "c1")
    assert turn is not None
    assert [ext.source(i) for i in ext.ids()] == ["x = 1", "%%agent\nmake a cell and a frame", "df2.describe()"]
    assert state(fe, turn) == {"state": "undoable", "summary": "1 cell inserted, 1 binding (df2)"}

    reply = ask(fe, "undo", turn=turn)
    assert reply["ok"] is True and reply["state"] == "undone", reply
    assert reply["report"] == "Took out the cell this run inserted.\nUnbound df2."
    assert [ext.source(i) for i in ext.ids()] == ["x = 1", "%%agent\nmake a cell and a frame"]
    assert printed(fe, "print('df2' in globals())") == "False"

    assert state(fe, turn) == {"state": "undone", "report": reply["report"], "redoable": True}
    again = ask(fe, "undo", turn=turn)
    assert again["ok"] is False and again["error"] == f"Already undone: {reply['report']}"

    redone = ask(fe, "redo", turn=turn)
    assert redone["ok"] is True and redone["state"] == "undoable", redone
    assert redone["report"] == "Put back the cell this run inserted.\nPut back df2 as this run left it."
    assert [ext.source(i) for i in ext.ids()] == ["x = 1", "%%agent\nmake a cell and a frame", "df2.describe()"]
    assert printed(fe, "print(df2)") == "5"
    assert ask(fe, "redo", turn=turn)["ok"] is False, "what is put back cannot be put back twice"

    taken = printed(fe, "%agent undo")
    assert taken == reply["report"], "a redone run can be undone again, told in the same sentences"
    assert state(fe, turn)["state"] == "undone"
    assert printed(fe, "print('df2' in globals())") == "False"
    assert printed(fe, "%agent undo") == "There is no agent change to the namespace left to undo."


def test_an_earlier_run_waits_for_the_later_run_that_changed_its_cell(kernel):
    ext = FakeExtension(["%%agent\nadd a cell", "%%agent\nchange that cell"])
    fe = kernel([op("insert", cells=[{"source": "a = 1"}], after=None), {"text": "Added."}],
                permission={"*": "allow"}, render_views=False, extension=ext)
    printed(fe, SETUP)
    printed(fe, NBOP_TOOL)
    first = run_cell(fe, "c0")
    inserted = [i for i in ext.ids() if i not in ("c0", "c1")]
    assert first is not None and len(inserted) == 1
    # The second run edits the first run's cell (the script cannot know its id, so the test makes the edit
    # inside a run of its own, as an agent's tool would).
    printed(fe, "import opencode_nb.kernel.notebook.journal as J\n"
                f"t = agent.journal.begin('ses_later', cell_id='c1')\ntok = J.TURN.set(t)\n"
                f"await nb.replace({inserted[0]!r}, source='a = 2', cell_type=None, session_id='ses_later')\n"
                "J.TURN.reset(tok)")
    assert ext.source(inserted[0]) == "a = 2"

    refused = ask(fe, "undo", turn=first)
    assert refused["ok"] is False and refused["state"] == "undoable"
    assert refused["error"] == (f"Not undone: the run of cell c1 changed {inserted[0]} after this run did. Undo the "
                                "later run first (the Undo on its card), then this one; nothing was changed.")
    assert ext.source(inserted[0]) == "a = 2"

    assert printed(fe, "%agent undo") == "Restored the cell this run edited."
    reply = ask(fe, "undo", turn=first)
    assert reply["ok"] is True and reply["report"] == "Took out the cell this run inserted."
    assert ext.ids() == ["c0", "c1"]


def test_a_run_that_changed_nothing_offers_no_undo_and_an_unknown_turn_is_unknown(kernel):
    ext = FakeExtension(["%%agent\njust talk"])
    fe = kernel([{"text": "Nothing to change."}], permission={"*": "allow"}, render_views=False, extension=ext)
    assert run_cell(fe, "c0") is None
    assert state(fe, "turn_from_another_kernel") == {"state": "unknown"}
    refused = ask(fe, "undo", turn="turn_from_another_kernel")
    assert refused["ok"] is False and "no record of that run" in refused["error"]


WRITE_INSERT_BIND = [
    {"tool_calls": [{"name": "write", "input": {"path": "notes.md", "content": "# Notes\nmade by the agent\n"}}]},
    op("insert", cells=[{"source": "df2.describe()"}], after=None),
    {"tool_calls": [{"name": "python", "input": {"code": "df2 = 5\nx = 3", "description": "bind df2, rebind x"}}]},
    {"text": "Made them."},
]


def test_the_cards_undo_says_one_sentence_per_effect_and_percent_agent_undo_says_the_same(kernel, tmp_path):
    ext = FakeExtension(["x = 1", "%%agent\nwrite notes, add a cell, make a frame"])
    fe = kernel(WRITE_INSERT_BIND, permission={"*": "allow"}, render_views=False, extension=ext)
    printed(fe, SETUP)
    printed(fe, NBOP_TOOL)
    assert fe.execute_cell("c0")["status"] == "ok"
    turn = run_cell(fe, "c1")
    notes = tmp_path / "project" / "notes.md"
    assert turn is not None and notes.exists() and printed(fe, "print(x)") == "3"

    reply = ask(fe, "undo", turn=turn)
    sentences = ["Removed notes.md, which this run created.", "Took out the cell this run inserted.",
                 "Unbound df2; x is back to 1."]
    assert reply["ok"] is True and reply["report"] == "\n".join(sentences), reply
    assert not notes.exists() and printed(fe, "print(x)") == "1"
    assert [ext.source(i) for i in ext.ids()] == ["x = 1", "%%agent\nwrite notes, add a cell, make a frame"]
    assert state(fe, turn)["report"] == reply["report"], "a page that asks again reads the same sentences"

    redone = ask(fe, "redo", turn=turn)
    assert redone["report"] == "\n".join(["Put back notes.md, which this run created.",
                                          "Put back the cell this run inserted.",
                                          "Put back df2 and x as this run left them."]), redone
    assert notes.read_text() == "# Notes\nmade by the agent\n" and printed(fe, "print(x)") == "3"

    assert printed(fe, "%agent undo") == reply["report"], "the magic prints the card's sentences"
    assert printed(fe, "%agent redo") == redone["report"]
