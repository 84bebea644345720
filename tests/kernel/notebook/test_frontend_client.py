"""The comm client without a kernel: recording comms stand in for ipykernel's, replies come from other threads."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from opencode_nb.kernel.notebook.frontend import NO_EXTENSION, Frontend, FrontendError, FrontendTimeout

HELLO = {"hello": "jupyterlab", "version": "0.1.0", "capabilities": ["read_cells", "run_cells"],
         "path": "work/a.ipynb", "frontend": "JupyterLab 4.6.6"}


class RecordingComm:
    """What a comm is to the client: it sends, and the front end's messages reach its callbacks."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.on_message: Any = None
        self.on_closed: Any = None

    def send(self, data: dict[str, Any]) -> None:
        self.sent.append(data)

    def on_msg(self, callback: Any) -> None:
        self.on_message = callback

    def on_close(self, callback: Any) -> None:
        self.on_closed = callback

    def deliver(self, data: dict[str, Any]) -> None:
        self.on_message({"content": {"data": data}})

    def close(self) -> None:
        pass


def connected(hello: dict[str, Any] = HELLO) -> tuple[Frontend, RecordingComm]:
    hellos: list[dict[str, Any]] = []
    frontend = Frontend(on_hello=hellos.append)
    comm = RecordingComm()
    frontend._opened_by_frontend(comm, {"content": {"data": {}}})
    comm.deliver(hello)
    assert hellos == [hello]
    return frontend, comm


def from_another_thread(action: Any) -> None:
    thread = threading.Thread(target=action)
    thread.start()
    thread.join()


async def test_a_reply_from_another_thread_resolves_the_request_it_names():
    frontend, comm = connected()
    task = asyncio.create_task(frontend.request("read_cells", cell_ids=["a"]))
    await asyncio.sleep(0.01)
    [sent] = comm.sent
    assert sent["action"] == "read_cells" and sent["cell_ids"] == ["a"]
    from_another_thread(lambda: comm.deliver({"reply_to": "someone-else", "ok": True}))
    from_another_thread(lambda: comm.deliver({"reply_to": sent["request_id"], "ok": True, "cells": []}))
    assert (await asyncio.wait_for(task, 2))["cells"] == []


async def test_every_request_has_its_own_id_and_replies_may_come_in_any_order():
    frontend, comm = connected()
    first = asyncio.create_task(frontend.request("read_cells", cell_ids=["1"]))
    second = asyncio.create_task(frontend.request("read_cells", cell_ids=["2"]))
    await asyncio.sleep(0.01)
    one, two = comm.sent
    assert one["request_id"] != two["request_id"]
    comm.deliver({"reply_to": two["request_id"], "ok": True, "n": 2})
    comm.deliver({"reply_to": one["request_id"], "ok": True, "n": 1})
    assert [(await first)["n"], (await second)["n"]] == [1, 2]


async def test_a_refusal_says_what_the_extension_said():
    frontend, comm = connected()
    task = asyncio.create_task(frontend.request("read_cells", cell_ids=["zz"]))
    await asyncio.sleep(0.01)
    comm.deliver({"reply_to": comm.sent[0]["request_id"], "ok": False, "error": "There is no cell with id zz."})
    with pytest.raises(FrontendError, match=r"JupyterLab 4\.6\.6 \(extension 0\.1\.0\) could not read_cells: "
                                            r"There is no cell with id zz\."):
        await task


async def test_no_reply_in_time_is_a_timeout_that_names_the_request():
    frontend, _ = connected()
    with pytest.raises(FrontendTimeout, match="did not answer read_cells within 0.05 s"):
        await frontend.request("read_cells", timeout_s=0.05)
    assert not frontend._pending, "a request given up on is forgotten"


async def test_without_an_extension_or_a_capability_nothing_is_sent():
    frontend = Frontend()
    with pytest.raises(FrontendError) as no_extension:
        await frontend.request("read_cells")
    assert str(no_extension.value) == NO_EXTENSION
    frontend, comm = connected()
    with pytest.raises(FrontendError, match="cannot delete_cells: update the opencode_nb JupyterLab extension"):
        frontend.send("delete_cells", cell_ids=["a"])
    assert comm.sent == []


async def test_the_comm_that_said_hello_last_is_the_live_one_and_closing_it_fails_its_requests():
    frontend, old = connected()
    task = asyncio.create_task(frontend.request("read_cells"))
    await asyncio.sleep(0.01)
    new = RecordingComm()
    frontend._opened_by_frontend(new, {"content": {"data": {**HELLO, "path": "work/b.ipynb"}}})
    assert frontend.path == "work/b.ipynb"
    old.on_closed({})
    with pytest.raises(FrontendError, match="closed the connection"):
        await task
    assert frontend.live
    await asyncio.sleep(0)
    second = asyncio.create_task(frontend.request("read_cells"))
    await asyncio.sleep(0.01)
    assert len(new.sent) == 1
    new.deliver({"reply_to": new.sent[0]["request_id"], "ok": True})
    await second
    new.on_closed({})
    assert not frontend.live and frontend.hello is not None


async def test_events_reach_the_request_they_belong_to_and_the_subscribers():
    frontend, comm = connected()
    seen: list[str] = []
    everything: list[str] = []
    frontend.subscribe(lambda event: everything.append(event["result"]["id"]))
    task = asyncio.create_task(frontend.request("run_cells", on_event=lambda e: seen.append(e["result"]["id"]),
                                                cell_ids=["a", "b"]))
    await asyncio.sleep(0.01)
    request_id = comm.sent[0]["request_id"]
    for cell in ("a", "b"):
        from_another_thread(lambda cell=cell: comm.deliver({"event": "cell_done", "request_id": request_id,
                                                            "result": {"id": cell, "status": "ok"}}))
    comm.deliver({"reply_to": request_id, "ok": True, "results": []})
    await task
    assert seen == ["a", "b"] and everything == ["a", "b"]


def test_a_hello_on_a_new_comm_is_a_page_connecting_anew_and_a_repeated_hello_is_not():
    frontend, comm = connected()
    told: list[int] = []
    frontend.on_page(lambda: told.append(frontend.pages))
    comm.deliver(HELLO)  # the extension says hello twice on each comm it opens
    assert frontend.pages == 1 and told == []
    reloaded = RecordingComm()
    from_another_thread(lambda: frontend._opened_by_frontend(reloaded, {"content": {"data": HELLO}}))
    reloaded.deliver(HELLO)
    assert frontend.pages == 2 and told == [2]
    reloaded.on_closed({})  # the notebook closed, then opened again in the same page
    reopened = RecordingComm()
    frontend._opened_by_frontend(reopened, {"content": {"data": HELLO}})
    assert frontend.pages == 3 and told == [2, 3]


def test_the_page_asks_and_is_answered_on_the_comm_it_asked_on():
    frontend, comm = connected()
    frontend.answer("undo_state", lambda request, reply: reply({"states": {t: "known" for t in request["turns"]}}))
    comm.sent.clear()
    comm.deliver({"request_id": "page_1", "action": "undo_state", "turns": ["turn_a"]})
    comm.deliver({"request_id": "page_2", "action": "undo_everything"})
    assert comm.sent[0] == {"ok": True, "states": {"turn_a": "known"}, "reply_to": "page_1"}
    assert comm.sent[1]["reply_to"] == "page_2" and comm.sent[1]["ok"] is False
    assert "does not answer 'undo_everything'" in comm.sent[1]["error"]


def test_an_answer_that_fails_still_replies_once_with_what_went_wrong():
    frontend, comm = connected()

    def broken(request: dict[str, Any], reply: Any) -> None:
        raise RuntimeError("the journal is gone")

    frontend.answer("undo", broken)
    comm.sent.clear()
    comm.deliver({"request_id": "page_3", "action": "undo", "turn": "turn_a"})
    assert comm.sent == [{"ok": False, "error": "the journal is gone", "reply_to": "page_3"}]


async def test_with_two_pages_on_one_comm_each_request_names_the_page_that_answers():
    """The kernel's comm reaches every page on the kernel; the others must not make the same change again."""
    frontend, comm = connected({**HELLO, "page": "alice"})
    comm.deliver({**HELLO, "page": "bob"})
    assert frontend.pages == 2, "a second page counts as a page connecting anew"
    frontend.send("read_cells")
    assert comm.sent[-1]["to"] == "bob" and comm.sent[-1]["action"] == "read_cells"


async def test_when_the_live_page_leaves_the_page_still_connected_answers():
    frontend, alices = connected({**HELLO, "page": "alice"})
    bobs = RecordingComm()
    frontend._opened_by_frontend(bobs, {"content": {"data": {}}})
    bobs.deliver({**HELLO, "page": "bob"})
    bobs.on_closed({})
    assert frontend.live
    frontend.send("read_cells")
    assert alices.sent[-1]["to"] == "alice" and not bobs.sent


async def test_an_extension_that_names_no_page_gets_requests_without_an_address():
    frontend, comm = connected()
    frontend.send("read_cells")
    assert "to" not in comm.sent[-1]
