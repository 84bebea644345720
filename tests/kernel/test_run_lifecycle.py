"""A run's life in a live notebook, in a real kernel: how a stopped cell ends, and how a run started before a
page reload still reaches its cell in the new page."""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any

import pytest

from opencode_nb.kernel.stopped import STOPPED

from .frontend import WIDGET_VIEW, FakeExtension, FakeFrontend
from .plans.test_steps import planned, step_source  # noqa: F401  (a fixture, used by name)
from .test_extension import SAY_HI, SLOW

pytestmark = pytest.mark.timeout(90)


def wait_running_tool(fe: FakeFrontend) -> None:
    fe.wait_for(lambda: any("ocnb-tool ocnb-running" in str(s.get("value", "")) for s in list(fe.models.values())),
                what="the running tool card")


def errors(fe: FakeFrontend, msg_id: str) -> list[dict[str, Any]]:
    return [m["content"] for m in fe.outputs(msg_id) if m["msg_type"] == "error"]


def replaced(ext: FakeExtension, cell_id: str) -> list[dict[str, Any]]:
    with ext.lock:
        return [r for r in ext.requests if r["action"] == "replace_cell" and r["cell_id"] == cell_id]


def connected(fe: FakeFrontend) -> None:
    """Wait until the kernel has the page's hello, as it has before a person runs anything."""
    check = "import opencode_nb.kernel as k; print(k.current().frontend.live)"
    fe.wait_for(lambda: fe.text(fe.run_id(check)).strip() == "True", what="the page's hello")


# ---------------------------------------------------------------------------------------------- stopping


def test_the_stop_button_fails_the_cell_with_one_short_line_so_the_queued_cells_never_run(kernel):
    fe = kernel(SLOW)
    cell = fe.execute("%%agent\nwait a while")
    queued = fe.execute("print('the next cell ran')")  # Run All sends every cell at once; the kernel queues them
    wait_running_tool(fe)
    started = time.time()
    fe.click(fe.wait_button("Stop"))
    reply = fe.done(cell)["content"]
    assert time.time() - started < 10, "long before the 30 s command would end"
    assert (reply["status"], reply["ename"], reply["evalue"]) == ("error", "AgentStopped", STOPPED)
    assert [e["traceback"] for e in errors(fe, cell)] == [[STOPPED]], "one line, no traceback into our code"
    text = fe.text(cell)
    assert "Working on it." in text and "must not be reached" not in text
    assert "(stopped)" not in text, "the cell's own line says it stopped; the transcript does not say it again"
    assert fe.done(queued)["content"]["status"] == "aborted"
    assert "the next cell ran" not in fe.text(queued)


def test_an_interrupt_ends_the_cell_exactly_as_the_stop_button_does(kernel):
    fe = kernel(SLOW)
    cell = fe.execute("%%agent\nwait a while")
    queued = fe.execute("print('the next cell ran')")
    wait_running_tool(fe)
    fe.interrupt()
    reply = fe.done(cell)["content"]
    assert (reply["status"], reply["ename"], reply["evalue"]) == ("error", "AgentStopped", STOPPED)
    assert [e["traceback"] for e in errors(fe, cell)] == [[STOPPED]]
    assert fe.done(queued)["content"]["status"] == "aborted"


def test_a_background_run_stopped_by_agent_stop_leaves_every_cell_ok_and_says_stopped(kernel):
    fe = kernel([*SLOW[:1], {"text": "Back again."}])
    cell = fe.execute("%%agent --bg\nwait a while")
    assert fe.done(cell)["content"]["status"] == "ok"
    wait_running_tool(fe)
    stop = fe.execute("%agent stop")
    assert fe.done(stop)["content"]["status"] == "ok"
    assert "Stopped 1 running agent." in fe.text(stop)
    fe.wait_for(lambda: "(stopped)" in fe.text(cell), timeout=10, what="the stopped transcript")
    assert not errors(fe, cell) and not errors(fe, stop)
    after = fe.execute("%agent are you there?")
    assert fe.done(after)["content"]["status"] == "ok" and "Back again." in fe.text(after)


def test_an_interrupted_plan_step_fails_its_cell_in_one_line_and_is_recorded_as_stopped(planned):  # noqa: F811
    fe, nb, plan_id = planned
    fe.run("import plan_model; plan_model.COMMANDS['2'] = 'sleep 31.5'")
    step = fe.execute(step_source(nb, 2))
    fe.wait_for(lambda: subprocess.run(["pgrep", "-f", "sleep 31.5"], capture_output=True).returncode == 0,
                what="the step's command")
    fe.interrupt()
    reply = fe.done(step)["content"]
    assert reply["ename"] == "AgentStopped"
    assert reply["evalue"] == (f"■ Step 2 was stopped and is not ticked. Run this cell again, or resume with "
                               f"%agent plan run {plan_id} --from 2")
    assert [e["traceback"] for e in errors(fe, step)] == [[reply["evalue"]]]
    progress = json.loads((nb.parent / ".opencode" / "plans" / f"{plan_id}.progress.json").read_text())
    assert (progress["steps"]["2"]["status"], progress["steps"]["2"]["error"]) == ("stopped", "it was stopped")


def test_a_run_that_finishes_leaves_its_cell_ok(kernel):
    fe = kernel(SAY_HI)
    cell = fe.execute("%%agent\nsay hi please")
    fe.click(fe.wait_button("Allow once"))
    assert fe.done(cell)["content"]["status"] == "ok"
    assert not errors(fe, cell)


# ---------------------------------------------------------------------------------------------- reloading


def test_after_a_reload_mid_run_the_new_page_gets_the_live_view_and_then_the_transcript(kernel):
    ext = FakeExtension(["%%agent\nsay hi please"])
    fe = kernel(SAY_HI, extension=ext)
    connected(fe)
    cell = fe.execute_cell_async("c0")
    allow = fe.wait_button("Allow once")
    assert not replaced(ext, "c0"), "the page that ran the cell shows it itself"

    fe.open_comm()  # the page reloads: the new page opens a comm of its own and says hello
    [live] = fe.wait_for(lambda: replaced(ext, "c0"), what="the live view handed to the new page")
    assert live["trusted"] is True and "execution_count" not in live  # the kernel's own output, as it ran
    model_id = live["outputs"][0]["data"][WIDGET_VIEW]["model_id"]
    assert fe.models[model_id]["_model_name"] == "VBoxModel", "the view the new page shows is the live one"

    fe.click(allow)
    reply = fe.done(cell)["content"]
    final = fe.wait_for(lambda: replaced(ext, "c0")[1:], what="the final transcript")[0]
    assert final["execution_count"] == reply["execution_count"]
    [shown] = ext.cell("c0").outputs
    assert shown["output_type"] == "display_data" and WIDGET_VIEW not in shown["data"]
    assert "ocnb-transcript" in shown["data"]["text/html"]
    assert "Done: it printed hi." in shown["data"]["text/plain"]
    assert ext.cell("c0").execution_count == reply["execution_count"]


def test_a_stopped_run_whose_page_reloaded_shows_the_stopped_line_in_the_new_page(kernel):
    ext = FakeExtension(["%%agent\nwait a while"])
    fe = kernel(SLOW, extension=ext)
    connected(fe)
    cell = fe.execute_cell_async("c0")
    wait_running_tool(fe)
    fe.open_comm()
    fe.wait_for(lambda: replaced(ext, "c0"), what="the live view handed to the new page")
    fe.click(fe.wait_button("Stop"))
    assert fe.done(cell)["content"]["status"] == "error"
    fe.wait_for(lambda: replaced(ext, "c0")[1:], what="the final transcript")
    transcript, error = ext.cell("c0").outputs
    assert "Stopped before it finished." in transcript["data"]["text/plain"]
    assert "(stopped)" not in transcript["data"]["text/plain"], "said once, by the error line under it"
    assert (error["output_type"], error["ename"], error["traceback"]) == ("error", "AgentStopped", [STOPPED])


def test_a_background_run_whose_page_reloaded_still_gets_its_transcript(kernel):
    ext = FakeExtension(["%%agent --bg\nsay hi please"])
    fe = kernel(SAY_HI, extension=ext)
    connected(fe)
    cell = fe.execute_cell_async("c0")
    assert fe.done(cell)["content"]["status"] == "ok"
    allow = fe.wait_button("Allow once")
    fe.open_comm()
    fe.wait_for(lambda: replaced(ext, "c0"), what="the live view handed to the new page")
    fe.click(allow)
    fe.wait_for(lambda: replaced(ext, "c0")[1:], what="the final transcript")
    [shown] = ext.cell("c0").outputs
    assert "Done: it printed hi." in shown["data"]["text/plain"]


def test_without_a_reload_the_kernel_leaves_the_cell_to_its_page(kernel):
    ext = FakeExtension(["%%agent\nsay hi please"])
    fe = kernel(SAY_HI, extension=ext)
    connected(fe)
    cell = fe.execute_cell_async("c0")
    fe.click(fe.wait_button("Allow once"))
    assert fe.done(cell)["content"]["status"] == "ok"
    time.sleep(0.3)
    assert not replaced(ext, "c0")


def test_without_the_extension_a_page_reloaded_mid_run_can_still_read_the_transcript_with_agent_show(kernel):
    fe = kernel(SAY_HI)  # no extension answers: the kernel cannot tell that the page went away
    cell = fe.execute("%%agent\nsay hi please")
    fe.click(fe.wait_button("Allow once"))
    fe.done(cell)
    show = fe.execute("%agent show")
    assert fe.done(show)["content"]["status"] == "ok"
    assert "say hi please" in fe.text(show) and "Done: it printed hi." in fe.text(show)
