"""A comm message that arrives as one cell ends does not take the next cell's idle status with it: every
cell of a Run All ends with its own idle, so the front end gives it an execution count."""

from __future__ import annotations

import contextlib
import threading
import time
import uuid

from .frontend import FakeFrontend

CELLS = 120


def run_all_under_comm_traffic(frontend: FakeFrontend, setup: str) -> list[str]:
    """Queue short awaiting cells as Run All does while comm messages stream in; returns the cells whose
    idle status never came."""
    frontend.run(setup + "\nimport asyncio\nget_ipython().kernel.comm_manager.register_target("
                 "'ocnb_test_traffic', lambda comm, msg: None)")
    comm_id = uuid.uuid4().hex
    frontend.kc.shell_channel.send(frontend.kc.session.msg(
        "comm_open", {"comm_id": comm_id, "target_name": "ocnb_test_traffic", "data": {}}))
    stop = threading.Event()

    def traffic() -> None:
        while not stop.is_set():
            frontend.send_comm(comm_id, {})
            time.sleep(0.0005)

    sender = threading.Thread(target=traffic)
    ids = [frontend.execute("await asyncio.sleep(0.002)") for _ in range(CELLS)]
    sender.start()
    try:
        frontend.wait_for(lambda: set(ids) <= {m["parent_header"].get("msg_id") for m in list(frontend.shell)},
                          120, "every cell's reply")
    finally:
        stop.set()
        sender.join()
    with contextlib.suppress(TimeoutError):  # reported below, by cell
        frontend.wait_for(lambda: not missing_idle(frontend, ids), 5, "every cell's idle status")
    return missing_idle(frontend, ids)


def missing_idle(frontend: FakeFrontend, ids: list[str]) -> list[str]:
    with frontend._lock:
        idle = {m["parent_header"].get("msg_id") for m in frontend.iopub
                if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"}
    return [i for i in ids if i not in idle]


def test_with_the_extension_loaded_every_cell_ends_with_its_own_idle_status(kernel):
    frontend = kernel([])
    assert run_all_under_comm_traffic(frontend, "") == []


def test_the_extension_guards_the_kernel_it_is_loaded_in(kernel):
    frontend = kernel([])
    reply = frontend.run("assert get_ipython().kernel.set_parent._ocnb_guarded")
    assert reply["content"]["status"] == "ok", reply["content"]
