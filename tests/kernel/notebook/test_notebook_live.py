"""The live notebook in a real kernel: every request of the opencode_nb comm, answered by a recording extension.

The front end here is `FakeExtension`: an in-memory nbformat notebook that answers exactly as
labextension/PROTOCOL.md says and runs cells as JupyterLab does (an execute request carrying the cell's id).
"""

from __future__ import annotations

import json
import time

import pytest

from ..cells_support import NBOP_TOOL, SETUP, op, printed, tool_results
from ..frontend import CAPABILITIES, FakeExtension

pytestmark = pytest.mark.timeout(90)

ALLOW = {"*": "allow"}


def start(kernel, ext: FakeExtension, script: list | None = None):
    fe = kernel(script or [], permission=ALLOW, render_views=False, extension=ext)
    fe.wait_for(lambda: ext.requests is not None and fe.extension_comms, what="the kernel's comm")
    printed(fe, SETUP)
    if script:
        printed(fe, NBOP_TOOL)
    return fe


def test_the_hello_makes_presence_exact_and_says_what_the_extension_can_do(kernel):
    ext = FakeExtension(["x = 1"], capabilities=["read_cells", "insert_cells"])
    fe = start(kernel, ext)
    text = printed(fe, "print(agent.presence.mode, '|', agent.presence.reason, '|', nb.live, nb.path, "
                       "agent.notebook_path, sorted(agent.frontend.capabilities), agent.frontend.hello['frontend'])")
    assert text == ("interactive | JupyterLab 4.6.6 answered with the opencode_nb extension | True work/analysis.ipynb "
                    "work/analysis.ipynb ['insert_cells', 'read_cells'] JupyterLab 4.6.6")


def test_read_gives_every_cell_or_those_asked_for_and_an_unknown_id_is_refused_by_name(kernel):
    ext = FakeExtension(["x = 1", {"cell_type": "markdown", "source": "# Notes"}, "print(x)"])
    ext.cell("c0").outputs = [{"output_type": "stream", "name": "stdout", "text": "y" * 3000}]
    fe = start(kernel, ext)
    snapshot = json.loads(printed(fe, "print((await nb.read()).model_dump_json())"))
    assert snapshot["source"] == "live" and snapshot["path"] == "work/analysis.ipynb" and snapshot["total"] == 3
    assert [(c["id"], c["cell_type"]) for c in snapshot["cells"]] == [("c0", "code"), ("c1", "markdown"),
                                                                      ("c2", "code")]
    assert snapshot["cells"][0]["outputs"][0]["text"].endswith("…[1000 more characters]")
    some = json.loads(printed(fe, "print((await nb.read(['c2', 'c0'])).model_dump_json())"))
    assert [c["id"] for c in some["cells"]] == ["c2", "c0"] and some["total"] == 3
    refused = printed(fe, "try:\n    await nb.read(['c0', 'nope'])\nexcept Exception as e:\n"
                          "    print(type(e).__name__, e)")
    assert refused.startswith("NotebookRefused") and "nope" in refused
    assert [r["action"] for r in ext.requests] == ["read_cells"] * 3
    assert ext.requests[1]["cell_ids"] == ["c2", "c0"] and "cell_ids" not in ext.requests[0]


def test_inserts_go_below_a_named_cell_below_the_calling_cell_in_order_or_at_the_end(kernel):
    ext = FakeExtension(["x = 1", "%%agent\nadd cells", "print('last')"])
    mark = {"opencode_nb": {"session": "s", "call": "c"}}
    script = [op("insert", cells=[{"source": "first = 1", "metadata": mark}], after=None),
              op("insert", cells=[{"cell_type": "markdown", "source": "## second"}], after=None),
              op("insert", cells=[{"source": "below x"}], after="c0"),
              op("calling_cell"), {"text": "Inserted."}]
    fe = start(kernel, ext, script)
    assert fe.execute_cell("c1")["status"] == "ok"
    first, second, third, calling = (r["result"] for r in tool_results(fe))
    ids = ext.ids()
    assert ids == ["c0", third[0], "c1", first[0], second[0], "c2"]
    assert calling == "c1"
    assert ext.cell(first[0]).metadata == mark and ext.cell(second[0]).cell_type == "markdown"
    inserts = [r for r in ext.requests if r["action"] == "insert_cells"]
    assert [r["after"] for r in inserts] == ["c1", first[0], "c0"]
    printed(fe, "print(await nb.insert([NewCell(source='at the end')], after=None, session_id='ses_none'))")
    assert ext.source(ext.ids()[-1]) == "at the end" and ext.requests[-1]["after"] is None


def test_replace_and_delete_return_the_cells_as_they_were(kernel):
    ext = FakeExtension(["x = 1", "y = 2", "z = 3"])
    ext.cell("c2").outputs = [{"output_type": "stream", "name": "stdout", "text": "three\n"}]
    fe = start(kernel, ext)
    before = printed(fe, "print((await nb.replace('c0', source='# now', cell_type='markdown', "
                         "session_id='s')).model_dump_json())")
    assert json.loads(before)["source"] == "x = 1" and json.loads(before)["cell_type"] == "code"
    assert ext.cell("c0").cell_type == "markdown" and ext.source("c0") == "# now"
    assert ext.requests[-1] == {**ext.requests[-1], "cell_id": "c0", "source": "# now", "cell_type": "markdown"}
    deleted = json.loads(printed(fe, "print(json.dumps([c.model_dump() for c in await nb.delete(['c2', 'c1'], "
                                     "session_id='s')]))"))
    assert [c["id"] for c in deleted] == ["c1", "c2"] and deleted[1]["outputs"][0]["text"] == "three\n"
    assert ext.ids() == ["c0"]


def test_the_active_cell_is_the_one_the_person_selected(kernel):
    ext = FakeExtension(["x = 1", "y = 2"])
    ext.active = "c1"
    fe = start(kernel, ext)
    assert printed(fe, "print(await nb.active_cell())") == "c1"
    assert ext.requests[-1]["action"] == "active_cell"


PLOT_CELL = "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nprint('plotted')\nvalue = 41 + 1\nvalue"


def test_while_the_agents_cell_runs_cells_run_in_the_kernel_and_their_outputs_land_in_the_notebook(kernel):
    ext = FakeExtension([PLOT_CELL, "raise ValueError('boom')", "print('never')", "%%agent\nrun them"])
    fe = start(kernel, ext, [op("run", cell_ids=["c0", "c1", "c2"]), {"text": "Ran."}])
    assert fe.execute_cell("c3")["status"] == "ok"
    [run] = tool_results(fe)
    assert [(r["id"], r["status"]) for r in run["result"]] == [("c0", "ok"), ("c1", "error"), ("c2", "aborted")]
    assert "plotted" in run["printed"]
    assert "run_cells" not in ext.actions(), "cells sent to the front end would queue behind the agent's cell"
    kinds = [o["output_type"] for o in ext.cell("c0").outputs]
    assert kinds == ["stream", "display_data", "execute_result"]
    assert ext.cell("c0").outputs[1]["data"]["image/png"].startswith("iVBOR")
    assert ext.cell("c0").outputs[2]["data"]["text/plain"] == "42"
    assert ext.cell("c0").execution_count is None, "the notebook's counter did not move"
    assert ext.cell("c1").outputs[0]["ename"] == "ValueError" and ext.cell("c2").outputs == []
    writes = [r for r in ext.requests if r["action"] == "replace_cell"]
    assert [(w["cell_id"], w["execution_count"]) for w in writes] == [("c0", None), ("c1", None)]
    assert printed(fe, "print(value)") == "42", "the cell ran in the person's namespace"


def test_a_cell_cannot_be_run_while_it_runs_and_agent_prompts_are_not_run_from_inside_an_agent(kernel):
    ext = FakeExtension(["%%agent\nsomething else", "%%agent\nrun cells"])
    fe = start(kernel, ext, [op("run", cell_ids=["c1"]), op("run", cell_ids=["c0"]), {"text": "No."}])
    assert fe.execute_cell("c1")["status"] == "ok"
    itself, prompt = (r["result"]["refused"] for r in tool_results(fe))
    assert "Cell c1 is running now" in itself and "Nothing was run" in itself
    assert "Cell c0 is a prompt to an agent (%%agent); an agent cannot run it" in prompt
    assert "replace_cell" not in ext.actions()


def test_a_detached_agent_has_the_notebook_run_its_cells_and_waits_for_the_results(kernel):
    ext = FakeExtension(["print(6 * 7)", "%%agent --bg\nrun it"])
    fe = start(kernel, ext, [{**op("run", cell_ids=["c0"]), "delay": 0.2}, {"text": "It printed 42."}])
    assert fe.execute_cell("c1")["status"] == "ok"
    fe.wait_for(lambda: "run_cells" in ext.actions(), what="the run_cells request")
    fe.wait_for(lambda: printed(fe, "print(agent.runs == [])") == "True", what="the agent to finish")
    [run] = tool_results(fe)
    [result] = run["result"]
    assert result["status"] == "ok" and result["execution_count"] is not None
    assert result["outputs"][0]["text"] == "42\n" and run["printed"] == "42\n", "cell_done reached the tool"
    request = next(r for r in ext.requests if r["action"] == "run_cells")
    assert request["cell_ids"] == ["c0"] and request["stop_on_error"] is True
    assert "replace_cell" not in ext.actions()
    assert ext.cell("c0").outputs[0]["text"] == "42\n"


def test_schedule_run_asks_the_notebook_to_run_cells_after_this_one_and_returns_at_once(kernel):
    ext = FakeExtension(["print('step one')", "print('step two')"], delays={"run_cells": 0.5})
    fe = start(kernel, ext)
    started = time.monotonic()
    assert printed(fe, "nb.schedule_run(['c0', 'c1'])\nprint('scheduled')") == "scheduled"
    assert time.monotonic() - started < 0.5
    fe.wait_for(lambda: ext.cell("c1").outputs, what="the second step's output")
    request = next(r for r in ext.requests if r["action"] == "run_cells")
    assert request["cell_ids"] == ["c0", "c1"] and request["checkpoint"] is True
    assert ext.cell("c0").outputs[0]["text"] == "step one\n"


def test_a_refusal_and_a_timeout_reach_the_caller_as_clear_messages(kernel):
    ext = FakeExtension(["x = 1"], failures={"replace_cell": "the notebook is read-only"}, silent={"active_cell"})
    fe = start(kernel, ext)
    refused = printed(fe, "try:\n    await nb.replace('c0', source='x = 2', cell_type=None, session_id='s')\n"
                          "except Exception as e:\n    print(type(e).__name__, e)")
    assert refused == ("NotebookRefused JupyterLab 4.6.6 (extension 0.1.0) could not replace_cell: "
                       "the notebook is read-only")
    timed_out = printed(fe, "try:\n    await agent.frontend.request('active_cell', timeout_s=0.3)\n"
                            "except Exception as e:\n    print(type(e).__name__, e)")
    assert timed_out == "FrontendTimeout JupyterLab 4.6.6 (extension 0.1.0) did not answer active_cell within 0.3 s."


@pytest.mark.parametrize("subshell", [False, True], ids=["main-shell", "subshell"])
def test_a_slow_reply_does_not_hold_up_other_replies(kernel, subshell):
    ext = FakeExtension(["x = 1"], delays={"read_cells": 2.0}, subshell=subshell)
    fe = start(kernel, ext)
    text = printed(fe, "import time\nslow = asyncio.ensure_future(nb.read())\nawait asyncio.sleep(0.1)\n"
                       "t = time.monotonic()\nactive = await nb.active_cell()\nfast = time.monotonic() - t\n"
                       "snapshot = await slow\nprint(active, fast < 1.0, len(snapshot.cells))")
    assert text == "c0 True 1"


def test_without_the_extension_a_request_says_how_to_get_it_and_a_missing_capability_says_so(kernel):
    fe = kernel([], render_views=False)
    printed(fe, SETUP)
    text = printed(fe, "try:\n    await agent.frontend.request('read_cells')\nexcept Exception as e:\n"
                       "    print(e)\ntry:\n    nb.schedule_run(['c0'])\nexcept Exception as e:\n"
                       "    print(type(e).__name__, e)")
    assert "not connected to this kernel" in text and "jupyter labextension list" in text
    assert "NotebookRefused The opencode_nb JupyterLab extension is not connected" in text
    ext = FakeExtension(["x = 1"], capabilities=[c for c in CAPABILITIES if c != "run_cells"])
    fe = start(kernel, ext)
    text = printed(fe, "try:\n    nb.schedule_run(['c0'])\nexcept Exception as e:\n    print(e)")
    assert text == ("JupyterLab 4.6.6 (extension 0.1.0) cannot run_cells: update the opencode_nb JupyterLab "
                    "extension (it ships with the opencode-nb package) and reload the page.")


def test_after_a_page_reload_the_front_ends_new_comm_is_the_live_one(kernel):
    ext = FakeExtension(["x = 1"])
    fe = start(kernel, ext)
    printed(fe, "await nb.read()")
    reopened = fe.open_comm()
    fe.wait_for(lambda: printed(fe, "print(agent.frontend._live.comm_id)") == reopened, what="the new live comm")
    printed(fe, "await nb.read()")
    assert [r["comm_id"] for r in ext.requests] == [fe.extension_comms[0], reopened]


def test_a_cell_run_in_the_kernel_past_the_timeout_is_cut_short_and_the_rest_are_not_run(kernel):
    ext = FakeExtension(["import time\nfor _ in range(100):\n    time.sleep(0.05)", "print('not reached')"])
    fe = start(kernel, ext)
    text = printed(fe, "runs = await nb.run(['c0', 'c1'], timeout_s=1, session_id='s', on_output=print)\n"
                       "print([(r.status, [o.get('ename') for o in r.outputs]) for r in runs])")
    assert text.splitlines()[-1] == "[('aborted', ['TimeoutError']), ('aborted', [])]"
    assert ext.cell("c0").outputs[-1]["evalue"] == "stopped when the 1 s given to run the cells ran out"
