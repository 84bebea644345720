"""Under `review: cells` an agent's cell changes wait for the person: `%agent accept|reject`, in a real kernel.

The page here is `FakeExtension` without `show_pending` (an extension that cannot show pending changes in
place), so the tool's card prints the `%agent accept N` lines, and the magics decide; with the capability
the kernel sends `show_pending` and answers `decide_pending` instead.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ..cells_support import printed
from ..frontend import CAPABILITIES, FakeExtension

pytestmark = pytest.mark.timeout(120)

AGENT_CELL = "%%agent\nfix the cells"
REVIEW = {"review": "cells"}


def edit(action: str, **fields: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": "notebook_edit", "input": {"action": action, **fields}}]}


def start(kernel, ext: FakeExtension, script: list[dict[str, Any]], *, extra: dict[str, Any] | None = None,
          permission: Any = None):
    fe = kernel(script, permission=permission or {"*": "allow"}, render_views=False, extension=ext,
                extra=REVIEW if extra is None else extra)
    fe.wait_for(lambda: fe.extension_comms, what="the kernel's comm")
    printed(fe, "import opencode_nb.kernel as _k\n_k.current().workspace()")
    return fe


def edit_results(fe) -> list[dict[str, Any]]:
    """The notebook_edit calls of the notebook's session: (output, metadata) as the model and card got them."""
    text = printed(fe, "import json as _j, opencode_nb.kernel as _k\n_ws = _k.current().workspace()\n"
                       "print(_j.dumps([{'output': p.state.output, 'metadata': p.state.metadata} "
                       "for m in _ws.sessions.messages(_k.current().session_id) for p in m.parts "
                       "if p.type == 'tool' and p.tool == 'notebook_edit' and p.state.status == 'completed']))")
    return json.loads(text.splitlines()[-1])


def last_request_text(fe) -> str:
    """The text of the last user message the model was sent."""
    return printed(fe, "import opencode_nb.kernel as _k\n_p = _k.current().workspace().providers.resolve("
                       "'scripted/test')[0]\n_m = [m for m in _p.requests[-1].messages if m.role == 'user'][-1]\n"
                       "print('\\n'.join(getattr(b, 'text', '') for b in _m.content))")


def replace_requests(ext: FakeExtension, cell_id: str) -> list[dict[str, Any]]:
    return [r for r in ext.requests if r["action"] == "replace_cell" and r["cell_id"] == cell_id and "source" in r]


def test_a_replace_under_review_waits_and_the_notebook_is_untouched_until_accepted_and_rerun(kernel):
    ext = FakeExtension(["x = 1", AGENT_CELL, "print(x)"])
    fe = start(kernel, ext, [edit("replace", cell_id="c0", source="x = 2"), {"text": "Proposed."},
                             {"text": "Good."}])
    before = json.dumps(ext.nb.cells[0])
    assert fe.execute_cell("c1")["status"] == "ok"
    assert json.dumps(ext.nb.cells[0]) == before and replace_requests(ext, "c0") == []
    [result] = edit_results(fe)
    assert result["output"].startswith("Proposed change 1 to cell c0; the person will accept or reject it")
    assert result["metadata"]["decide"] == ["%agent accept 1", "%agent reject 1"]
    assert "-x = 1" in result["metadata"]["diff"] and "+x = 2" in result["metadata"]["diff"]
    assert printed(fe, "%agent pending").startswith("Change 1: replace cell [c0]")

    said = printed(fe, "%agent accept 1")
    assert said == "Accepted change 1: replaced the source of cell [c0]; it ran without an error."
    assert ext.source("c0") == "x = 2" and printed(fe, "print(x)") == "2", "replaced, then run in the kernel"
    assert printed(fe, "%agent pending") == "No change is pending."

    assert fe.run("%%agent\nthanks")["content"]["status"] == "ok"
    told = last_request_text(fe)
    assert "The person accepted change 1: replaced the source of cell c0; it ran without an error." in told

    printed(fe, "%agent undo")
    assert ext.source("c0") == "x = 1", "the proposing turn's undo takes the accepted change back"


def test_a_rejected_change_never_touches_the_notebook_and_the_agent_is_told(kernel):
    ext = FakeExtension(["x = 1", AGENT_CELL])
    fe = start(kernel, ext, [edit("replace", cell_id="c0", source="x = 2"), {"text": "Proposed."},
                             {"text": "Understood."}])
    before = json.dumps(ext.nb.cells[0])
    assert fe.execute_cell("c1")["status"] == "ok"
    assert printed(fe, "%agent reject 1") == "Rejected change 1 to cell [c0]; the notebook was not changed."
    assert json.dumps(ext.nb.cells[0]) == before and replace_requests(ext, "c0") == []
    assert fe.run("%%agent\nwhat now")["content"]["status"] == "ok"
    assert "The person rejected change 1 to cell c0: nothing was changed." in last_request_text(fe)
    assert "rejected" not in last_request_text_after_another_prompt(fe), "each decision is told once"


def last_request_text_after_another_prompt(fe) -> str:
    fe.run("%%agent\nand now")
    return last_request_text(fe)


def test_accept_all_applies_three_changes_in_the_order_proposed(kernel):
    ext = FakeExtension(["a = 1", "b = 2", "c = 3", AGENT_CELL])
    script = [edit("replace", cell_id="c0", source="a = 10"), edit("replace", cell_id="c1", source="b = 20"),
              edit("insert", source="total = a + b + c"), {"text": "Three changes."}]
    fe = start(kernel, ext, script)
    printed(fe, "c = 3")
    assert fe.execute_cell("c3")["status"] == "ok"
    assert [ext.source(i) for i in ext.ids()] == ["a = 1", "b = 2", "c = 3", AGENT_CELL]
    refused = fe.run("%agent accept")
    assert refused["content"]["status"] == "error"
    assert "3 changes are pending (1, 2, 3); say which" in refused["content"]["evalue"]
    said = printed(fe, "%agent accept all").splitlines()
    assert said[:2] == ["Accepted change 1: replaced the source of cell [c0]; it ran without an error.",
                        "Accepted change 2: replaced the source of cell [c1]; it ran without an error."]
    assert said[2].startswith("Accepted change 3: inserted code cell [") and said[2].endswith(
        "below [c3]; it ran without an error.")
    ids = ext.ids()
    assert [ext.source(i) for i in ids] == ["a = 10", "b = 20", "c = 3", AGENT_CELL, "total = a + b + c"]
    assert printed(fe, "print(total)") == "33"


def test_an_accepted_fix_that_still_fails_says_the_error(kernel):
    ext = FakeExtension(["df = {'a': 1}", "df['b']", AGENT_CELL])
    fe = start(kernel, ext, [edit("replace", cell_id="c1", source="df['c']"), {"text": "Try this."}])
    printed(fe, "df = {'a': 1}")
    assert fe.execute_cell("c2")["status"] == "ok"
    assert printed(fe, "%agent accept 1") == ("Accepted change 1: replaced the source of cell [c1]; running it "
                                              "raised KeyError: 'c'.")
    assert ext.cell("c1").outputs[-1]["ename"] == "KeyError"


def test_a_cell_the_person_edited_since_is_a_conflict_until_accepted_anyway(kernel):
    ext = FakeExtension(["x = 1", AGENT_CELL])
    fe = start(kernel, ext, [edit("replace", cell_id="c0", source="x = 2"), {"text": "Proposed."}])
    assert fe.execute_cell("c1")["status"] == "ok"
    ext.cell("c0").source = "x = 'mine'"
    said = printed(fe, "%agent accept 1")
    assert said == ("Change 1 was not applied: cell [c0] was edited since the change was proposed, and applying it "
                    "would overwrite that edit. Reject it (%agent reject 1) or accept it anyway "
                    "(%agent accept 1 --anyway).")
    assert ext.source("c0") == "x = 'mine'"
    assert printed(fe, "%agent accept 1 --anyway --no-run") == "Accepted change 1: replaced the source of cell [c0]."
    assert ext.source("c0") == "x = 2"


def test_a_change_to_a_cell_deleted_meanwhile_is_dropped_and_said(kernel):
    ext = FakeExtension(["x = 1", AGENT_CELL])
    fe = start(kernel, ext, [edit("replace", cell_id="c0", source="x = 2"), {"text": "Proposed."}])
    assert fe.execute_cell("c1")["status"] == "ok"
    del ext.nb.cells[0]
    assert printed(fe, "%agent accept 1") == ("Change 1 to cell [c0] was dropped: cell [c0] was deleted since; "
                                              "nothing was applied.")
    assert printed(fe, "%agent pending") == "No change is pending."


def test_a_deny_rule_still_denies_under_review_and_notebook_run_waits_for_a_pending_change(kernel):
    ext = FakeExtension(["x = 1", AGENT_CELL])
    script = [edit("delete", cell_id="c0"), edit("replace", cell_id="c0", source="x = 2"),
              {"tool_calls": [{"name": "notebook_run", "input": {"cell_ids": ["c0"]}}]},
              {"tool_calls": [{"name": "notebook_read", "input": {}}]}, {"text": "Waiting."}]
    fe = start(kernel, ext, script, permission={"*": "allow", "notebook_edit": {"delete": "deny"}})
    assert fe.execute_cell("c1")["status"] == "ok"
    errors = json.loads(printed(fe, "import json as _j, opencode_nb.kernel as _k\n_ws = _k.current().workspace()\n"
                                    "print(_j.dumps([[p.tool, p.state.status, getattr(p.state, 'error', None) or "
                                    "p.state.output] for m in _ws.sessions.messages(_k.current().session_id) "
                                    "for p in m.parts if p.type == 'tool']))"))
    assert errors[0][0] == "notebook_edit" and errors[0][1] == "error" and "deny" in errors[0][2]
    assert errors[1][1] == "completed" and errors[1][2].startswith("Proposed change 1")
    assert errors[2][1] == "error" and "pending for cell c0 (change 1)" in errors[2][2]
    assert errors[3][1] == "completed" and "pending change 1" in errors[3][2]
    assert ext.source("c0") == "x = 1" and "c0" in ext.ids()


def test_a_page_that_shows_pending_changes_is_sent_them_and_decides_over_the_comm(kernel):
    ext = FakeExtension(["x = 1", AGENT_CELL], capabilities=[*CAPABILITIES, "show_pending"])
    fe = start(kernel, ext, [edit("replace", cell_id="c0", source="x = 2"), {"text": "Proposed."}])
    assert fe.execute_cell("c1")["status"] == "ok"
    shown = [r for r in ext.requests if r["action"] == "show_pending"]
    assert [c["n"] for c in shown[-1]["changes"]] == [1] and shown[-1]["changes"][0]["state"] == "pending"
    assert shown[-1]["changes"][0]["cell_id"] == "c0" and shown[-1]["changes"][0]["new_source"] == "x = 2"
    assert "decide" not in edit_results(fe)[0]["metadata"], "the page shows it in place: no lines to type"

    fe.open_comm()  # a reloaded page is sent the pending changes again
    fe.wait_for(lambda: len([r for r in ext.requests if r["action"] == "show_pending"]) > len(shown),
                what="show_pending to the new page")
    request_id = "page_decide_1"
    fe.send_comm(fe.extension_comms[-1], {"request_id": request_id, "action": "decide_pending", "n": 1,
                                          "accept": True, "rerun": True})
    reply = fe.wait_for(lambda: next((m for m in page_replies(fe) if m.get("reply_to") == request_id), None),
                        what="the decide_pending reply")
    assert reply["ok"] and reply["decisions"] == [
        {"n": 1, "state": "accepted", "said": "Accepted change 1: replaced the source of cell [c0]; it ran without "
                                              "an error."}]
    assert ext.source("c0") == "x = 2"
    last = [r for r in ext.requests if r["action"] == "show_pending"][-1]
    assert [(c["n"], c["state"]) for c in last["changes"]] == [(1, "accepted")]


def page_replies(fe) -> list[dict[str, Any]]:
    with fe._lock:
        return [m["content"]["data"] for m in fe.iopub if m["msg_type"] == "comm_msg"
                and "reply_to" in (m["content"].get("data") or {})]


def test_review_per_agent_and_off_by_default(kernel):
    ext = FakeExtension(["x = 1", AGENT_CELL])
    fe = start(kernel, ext, [edit("replace", cell_id="c0", source="x = 2"), {"text": "Done."}], extra={})
    assert fe.execute_cell("c1")["status"] == "ok"
    assert ext.source("c0") == "x = 2", "without review the change lands at once, as before"


def test_review_set_for_one_agent_reviews_that_agents_changes(kernel):
    ext = FakeExtension(["x = 1", AGENT_CELL])
    fe = start(kernel, ext, [edit("replace", cell_id="c0", source="x = 2"), {"text": "Proposed."}],
               extra={"review": "off", "agent": {"build": {"review": "cells"}}})
    assert fe.execute_cell("c1")["status"] == "ok"
    assert ext.source("c0") == "x = 1" and edit_results(fe)[0]["metadata"]["review"] == "pending"
