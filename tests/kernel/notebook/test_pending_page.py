"""`show_pending` and `decide_pending` over a recording comm (no kernel): what the page is sent, when, and how a
malformed request from it is answered."""

from __future__ import annotations

import asyncio
from typing import Any

from opencode_nb.kernel.notebook.frontend import Frontend
from opencode_nb.kernel.notebook.journal import Journal
from opencode_nb.kernel.notebook.pending import PendingChange, PendingChanges
from opencode_nb.kernel.notebook.pending_page import PendingPage
from opencode_nb.kernel.presence import Presence

from .test_frontend_client import HELLO, RecordingComm

SHOWS = {**HELLO, "capabilities": [*HELLO["capabilities"], "show_pending"]}


def page(hello: dict[str, Any], loop: asyncio.AbstractEventLoop | None) -> tuple[PendingChanges, RecordingComm]:
    frontend = Frontend()
    pending = PendingChanges(notebook=lambda: None, journal=Journal(), presence=Presence(terminal=True),
                             config=lambda: None)
    PendingPage(pending, frontend, lambda: loop).attach()
    comm = RecordingComm()
    frontend._opened_by_frontend(comm, {"content": {"data": {}}})
    for n in (1, 2):
        pending.changes.append(PendingChange(n=n, action="replace", cell_id=f"c{n}", anchor=None, cell_type="code",
                                             old_source="a", old_type="code", new_source="b", session_id="s",
                                             turn=None, diff="-a\n+b\n"))
    comm.deliver(hello)
    return pending, comm


async def answer(comm: RecordingComm, request_id: str) -> dict[str, Any]:
    """The reply to the page's request, once the kernel's loop has worked it out."""
    for _ in range(200):
        found = next((m for m in comm.sent if m.get("reply_to") == request_id), None)
        if found is not None:
            return found
        await asyncio.sleep(0.01)
    raise AssertionError(f"no reply to {request_id}")


def shown(comm: RecordingComm) -> list[list[tuple[int, str]]]:
    return [[(c["n"], c["state"]) for c in m["changes"]] for m in comm.sent if m.get("action") == "show_pending"]


async def test_a_page_that_connects_is_sent_the_pending_changes_and_each_decision():
    pending, comm = page(SHOWS, asyncio.get_running_loop())
    assert shown(comm) == [[(1, "pending"), (2, "pending")]]
    assert pending.in_place()
    await pending.decide(1, False)
    assert shown(comm)[-1] == [(1, "rejected"), (2, "pending")]
    assert comm.sent[-1]["changes"][0]["said"] == "Rejected change 1 to cell [c1]; the notebook was not changed."


async def test_a_page_that_cannot_show_them_is_sent_nothing():
    pending, comm = page(HELLO, asyncio.get_running_loop())
    await pending.decide(None, False)
    assert shown(comm) == [] and not pending.in_place()


async def test_decide_pending_answers_with_the_decisions_or_says_what_it_takes():
    _, comm = page(SHOWS, asyncio.get_running_loop())
    comm.deliver({"request_id": "page_1", "action": "decide_pending", "n": "1", "accept": True})
    assert comm.sent[-1] == {"ok": False, "reply_to": "page_1", "error": (
        "decide_pending takes n (a change's number, or null for every pending one), accept (true or false), and "
        "optionally rerun and force (true or false).")}
    comm.deliver({"request_id": "page_2", "action": "decide_pending", "n": None, "accept": False, "rerun": True})
    reply = await answer(comm, "page_2")
    assert reply["ok"] and [(d["n"], d["state"]) for d in reply["decisions"]] == [(1, "rejected"), (2, "rejected")]
    comm.deliver({"request_id": "page_3", "action": "decide_pending", "n": 2, "accept": True})
    reply = await answer(comm, "page_3")
    assert reply == {"ok": False, "reply_to": "page_3", "error": "Change 2 was rejected already. No change is pending."}
