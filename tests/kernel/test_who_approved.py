"""On a server two people use, an approval records who clicked it, and on a hub only the owner's click counts.

Two pages are two clients of one kernel, each with its own client session id in every message header; each
page's hello names the person signed in to it. Here alice's page is the test's own client and bob's page a
second client session on the same comm, as a second browser on a shared notebook would be.
"""

from __future__ import annotations

import glob
import sqlite3
from pathlib import Path

import pytest

from .frontend import FakeExtension, FakeFrontend

pytestmark = pytest.mark.timeout(90)

SAY_HI = [
    {"text": "Let me check.",
     "tool_calls": [{"name": "bash", "input": {"command": "echo hi > hi.txt", "description": "say hi"}}]},
    {"text": "Done: it wrote hi."},
]
ALICE = {"username": "alice", "name": "Alice", "display_name": "Alice Smith"}
BOB = {"username": "bob", "name": "Bob", "display_name": "Bob Jones"}
BOB_SESSION = "bobs-page-client-session"


def two_pages(kernel, tmp_path: Path, env: dict[str, str]) -> tuple[FakeFrontend, FakeExtension]:
    ext = FakeExtension(["%%agent\nsay hi please"])
    fe = kernel(SAY_HI, extension=ext, hello=ext.hello(page="alices-page", user=ALICE), env=env)
    fe.wait_for(lambda: fe.extension_comms, what="the extension's comm")
    fe.send_comm(fe.extension_comms[0], ext.hello(page="bobs-page", user=BOB), session=BOB_SESSION)
    return fe, ext


def stored_text(data_dir: Path) -> str:
    """Everything the session store holds, as text: the tool call's record of who approved it is in it."""
    found = []
    for path in glob.glob(str(data_dir / "**" / "*.sqlite"), recursive=True):
        with sqlite3.connect(path) as db:
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
                found += [" ".join(map(str, row)) for row in db.execute(f'SELECT * FROM "{table}"')]
    return "\n".join(found)


def test_on_a_hub_a_visitors_click_is_refused_in_the_prompt_and_the_owners_is_recorded(kernel, tmp_path: Path):
    fe, _ = two_pages(kernel, tmp_path, {"JUPYTERHUB_USER": "alice"})
    project = tmp_path / "project"
    msg = fe.execute("%%agent\nsay hi please")
    button = fe.wait_button("Allow once")
    said = fe.wait_for(lambda: fe.html_of("ocnb-approvers"), what="who may answer, in the prompt")
    assert "Only alice (this server&#x27;s owner) can answer." in said[0], "the prompt says so from the start"

    fe.click(button, session=BOB_SESSION)
    fe.wait_for(lambda: fe.html_of("ocnb-approval-refused"), what="the refusal of bob's click")
    refusal = fe.html_of("ocnb-approval-refused")[0]
    assert "Only alice" in refusal and "Bob Jones (bob)" in refusal
    assert not (project / "hi.txt").exists() and fe.reply_or_none(msg) is None, "bob's click let nothing run"

    fe.click(fe.wait_button("Allow once"))
    assert fe.done(msg)["content"]["status"] == "ok"
    assert (project / "hi.txt").read_text() == "hi\n"
    text = fe.text(msg)
    assert "asked for bash echo hi > hi.txt: allowed once by Alice Smith (alice)" in text
    stored = stored_text(tmp_path / "data")
    assert "approved_by" in stored and "Alice Smith (alice)" in stored and "Bob" not in stored


def test_off_a_hub_anyone_who_sees_the_prompt_answers_and_is_named(kernel, tmp_path: Path):
    fe, _ = two_pages(kernel, tmp_path, {})
    msg = fe.execute("%%agent\nsay hi please")
    fe.click(fe.wait_button("Allow once"), session=BOB_SESSION)
    assert fe.done(msg)["content"]["status"] == "ok"
    assert (tmp_path / "project" / "hi.txt").exists()
    assert "allowed once by Bob Jones (bob)" in fe.text(msg)
    assert not fe.html_of("ocnb-approvers"), "nobody is singled out where anyone may answer"


def test_approvals_anyone_lets_a_visitor_answer_on_a_hub(kernel, tmp_path: Path):
    ext = FakeExtension(["%%agent\nsay hi please"])
    fe = kernel(SAY_HI, extension=ext, hello=ext.hello(page="alices-page", user=ALICE),
                env={"JUPYTERHUB_USER": "alice"}, extra={"approvals": "anyone"})
    fe.wait_for(lambda: fe.extension_comms, what="the extension's comm")
    fe.send_comm(fe.extension_comms[0], ext.hello(page="bobs-page", user=BOB), session=BOB_SESSION)
    msg = fe.execute("%%agent\nsay hi please")
    fe.click(fe.wait_button("Allow once"), session=BOB_SESSION)
    assert fe.done(msg)["content"]["status"] == "ok"
    assert "allowed once by Bob Jones (bob)" in fe.text(msg)



def replies_to(fe: FakeFrontend, request_id: str) -> list[dict]:
    return [m["content"]["data"] for m in list(fe.iopub)
            if m["msg_type"] == "comm_msg" and (m["content"].get("data") or {}).get("reply_to") == request_id]


def test_on_a_hub_only_the_owners_page_decides_pending_cell_changes(kernel, tmp_path: Path):
    fe, _ = two_pages(kernel, tmp_path, {"JUPYTERHUB_USER": "alice"})
    comm = fe.extension_comms[0]
    decide = {"action": "decide_pending", "n": None, "accept": True, "rerun": False}
    fe.send_comm(comm, {**decide, "request_id": "page_bob"}, session=BOB_SESSION)
    fe.send_comm(comm, {**decide, "request_id": "page_alice"})
    bobs = fe.wait_for(lambda: replies_to(fe, "page_bob"), what="the answer to bob's decision")[0]
    alices = fe.wait_for(lambda: replies_to(fe, "page_alice"), what="the answer to alice's decision")[0]
    assert not bobs["ok"] and "Only alice" in bobs["error"] and "Bob Jones (bob)" in bobs["error"]
    assert "Only alice" not in str(alices.get("error")), alices


def test_the_config_view_says_who_may_answer(kernel, tmp_path: Path):
    fe, _ = two_pages(kernel, tmp_path, {"JUPYTERHUB_USER": "alice"})
    assert "approvals: auto — only alice (JUPYTERHUB_USER) may answer prompts" in fe.text(fe.run_id("%agent config"))


def test_the_page_of_the_person_who_ran_the_prompt_answers_its_requests(kernel, tmp_path: Path):
    """Bob's page greeted last, but Alice ran the cell: her page shows what the run asks of the notebook."""
    ext = FakeExtension(["%%agent\nadd a cell"])
    script = [{"tool_calls": [{"name": "notebook_edit", "input": {"action": "insert", "source": "x = 1"}}]},
              {"text": "Added."}]
    fe = kernel(script, extension=ext, hello=ext.hello(page="alices-page", user=ALICE),
                permission={"*": "allow"})
    fe.wait_for(lambda: fe.extension_comms, what="the extension's comm")
    fe.send_comm(fe.extension_comms[0], ext.hello(page="bobs-page", user=BOB), session=BOB_SESSION)
    assert fe.done(fe.execute("%%agent\nadd a cell"))["content"]["status"] == "ok"
    inserts = [r for r in ext.requests if r.get("action") == "insert_cells"]
    assert inserts and all(r.get("to") == "alices-page" for r in inserts), ext.requests
