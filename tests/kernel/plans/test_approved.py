"""A plan approved in a cell runs its steps right away, in order, while that cell still executes, so the
cells queued after it (Run All) run after the steps; a failing step stops the rest and that cell; with the
JupyterLab extension each step shows in its own cell, and running that cell afterwards does not run the step
twice."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.kernel.frontend import WIDGET_VIEW, FakeExtension
from tests.kernel.plans.test_steps import MODEL, SETUP, cells_of, kernel_value, notebook_file, source, step_source

pytestmark = pytest.mark.timeout(150)

APPROVING = "%%agent --agent plan\nPlan how to write and count a greeting."
BELOW = "print('below', open('hello.txt').read())"


def start_headless(kernel, tmp_path: Path, fail: set[int] = frozenset()):  # type: ignore[assignment]
    project = tmp_path / "project"
    project.mkdir()
    nb = notebook_file(project, [APPROVING, BELOW])
    fe = kernel([], render_views=False, files={"plan_model.py": MODEL},
                env={"OPENCODE_NB_HEADLESS": "1", "OPENCODE_NB_NOTEBOOK": str(nb)})
    assert fe.run(SETUP)["content"]["status"] == "ok"
    if fail:
        fe.run(f"import plan_model; plan_model.FAIL.update({sorted(fail)!r})")
    return fe, nb


def plan_id_of(nb: Path) -> str:
    first = next(source(c) for c in cells_of(nb) if source(c).startswith("%%agent --plan"))
    return re.match(r"%%agent --plan (\S+) --step 1", first).group(1)


def plan_lines(nb: Path, plan_id: str) -> list[str]:
    return (nb.parent / ".opencode" / "plans" / f"{plan_id}.md").read_text().splitlines()[4:7]


def test_the_approving_cell_runs_the_steps_in_order_before_the_cells_queued_after_it(kernel, tmp_path):
    fe, nb = start_headless(kernel, tmp_path)
    approving = fe.execute(APPROVING)
    below = fe.execute(BELOW)  # queued behind it, as Run All sends every cell at once
    assert fe.done(approving, 90)["content"]["status"] == "ok", fe.text(approving)
    assert fe.done(below)["content"]["status"] == "ok"
    assert fe.text(below).strip() == "below hello plan cells", "the next cell saw what the steps did"

    plan_id = plan_id_of(nb)
    text = fe.text(approving)
    assert "The plan is approved: its 3 steps run now, here, one after another" in text
    assert [f"✓ Step {n} of 3" in text for n in (1, 2, 3)] == [True] * 3, "one block, every step ticked in it"
    order = [text.index(f"Step {n} is done") for n in (1, 2, 3)]
    assert order == sorted(order), "headless, each step's transcript is in the approving cell, in order"
    assert f"✓ All 3 steps of plan {plan_id} ran and are ticked" in text
    assert [r[0] for r in kernel_value(fe, "plan_model.STEP_REQUESTS")] == ["1", "2", "3"]
    assert all("[x]" in line for line in plan_lines(nb, plan_id))
    todos = kernel_value(fe, "[t.status for t in _ws.sessions.todos(_c().session_id)]")
    assert todos == ["completed"] * 3


def test_a_step_cell_run_after_its_step_ran_says_so_once_then_runs_it_again(kernel, tmp_path):
    fe, nb = start_headless(kernel, tmp_path)
    assert fe.run(APPROVING, 90)["content"]["status"] == "ok"
    plan_id = plan_id_of(nb)

    again = fe.execute(step_source(nb, 1))
    assert fe.done(again, 60)["content"]["status"] == "ok"
    said = fe.text(again)
    assert "✓ Step 1 already ran right after the plan was approved" in said and "not run again" in said
    assert "It said: Step 1 is done:" in said and "Run this cell again to run step 1 once more" in said
    assert [r[0] for r in kernel_value(fe, "plan_model.STEP_REQUESTS")] == ["1", "2", "3"], "nothing ran twice"

    rerun = fe.execute(step_source(nb, 1))
    assert fe.done(rerun, 60)["content"]["status"] == "ok"
    assert "re-run: run 2 of this step" in fe.text(rerun)
    assert [r[0] for r in kernel_value(fe, "plan_model.STEP_REQUESTS")] == ["1", "2", "3", "1"]

    edited = f"%%agent --plan {plan_id} --step 3\nSay goodbye in French."
    assert fe.run(edited, 60)["content"]["status"] == "ok"
    assert "follow it):\nSay goodbye in French.\n" in kernel_value(fe, "plan_model.STEP_REQUESTS")[-1][1], \
        "an edited step is a new request: it runs at once"


def test_a_failing_step_stops_the_rest_and_fails_the_approving_cell_with_where_to_resume(kernel, tmp_path):
    fe, nb = start_headless(kernel, tmp_path, fail={2})
    approving = fe.execute(APPROVING)
    below = fe.execute(BELOW)
    reply = fe.done(approving, 90)["content"]
    plan_id = plan_id_of(nb)
    assert reply["status"] == "error"
    assert reply["evalue"].startswith(f"Step 2 of plan {plan_id} did not finish")
    assert f"run step 2's cell, or resume with %agent plan run {plan_id} --from 2" in reply["evalue"]
    assert fe.done(below)["content"]["status"] == "aborted", "Run All stops at the failure"
    assert [r[0] for r in kernel_value(fe, "plan_model.STEP_REQUESTS")] == ["1", "2"], "step 3 never started"
    lines = plan_lines(nb, plan_id)
    assert "[x]" in lines[0] and "[x]" not in lines[1] and "[x]" not in lines[2]

    fe.run("import plan_model; plan_model.FAIL.clear()")
    resumed = fe.execute(f"%agent plan run {plan_id} --from 2")
    assert fe.done(resumed, 90)["content"]["status"] == "ok", fe.text(resumed)
    assert all("[x]" in line for line in plan_lines(nb, plan_id))


def test_a_headless_background_prompt_awaits_its_run_and_runs_the_approved_steps_in_its_cell(kernel, tmp_path):
    fe, nb = start_headless(kernel, tmp_path)
    bg = APPROVING.replace("--agent plan", "--agent plan --bg")
    data = json.loads(nb.read_text())
    data["cells"][0]["source"] = bg
    nb.write_text(json.dumps(data))
    msg = fe.execute(bg)
    assert fe.done(msg, 90)["content"]["status"] == "ok", fe.text(msg)
    assert [r[0] for r in kernel_value(fe, "plan_model.STEP_REQUESTS")] == ["1", "2", "3"]
    assert all("[x]" in line for line in plan_lines(nb, plan_id_of(nb)))
    assert "The plan is approved: its 3 steps run now, here" in fe.text(msg)


# ---------------------------------------------------------------------------------------------- with the extension


def approve_until_done(fe, msg_id: str, timeout: float = 90, until: Any = None,
                       choice: str = "Run the steps now") -> dict[str, Any]:
    """Click every approval that appears (the plan's `choice`, "Allow once"), as a person would, until the cell
    is done (and `until()` holds)."""
    clicked: set[str] = set()

    def settled() -> Any:
        for label in (choice, "Allow once"):
            for comm_id in fe.buttons(label):
                if comm_id not in clicked and not fe.models[comm_id].get("disabled"):
                    clicked.add(comm_id)
                    fe.click(comm_id)
        return fe.reply_or_none(msg_id) and (until is None or until())

    fe.wait_for(settled, timeout, "the cell to end")
    fe.done(msg_id, timeout)
    return fe.reply(msg_id)


def replaced_outputs(ext: FakeExtension, cell_id: str) -> list[list[dict[str, Any]]]:
    """The outputs the kernel put into `cell_id` through `replace_cell`, request by request."""
    with ext.lock:
        return [r["outputs"] for r in ext.requests if r["action"] == "replace_cell" and r["cell_id"] == cell_id
                and "outputs" in r]


def output_text(outputs: list[dict[str, Any]]) -> str:
    return "\n".join(str(o.get("text") or o.get("data", {}).get("text/plain", "")) for o in outputs)


def test_with_the_extension_each_step_shows_live_in_its_own_cell_and_ends_with_its_transcript(kernel):
    ext = FakeExtension([SETUP, APPROVING, BELOW])
    fe = kernel([], files={"plan_model.py": MODEL}, extension=ext,
                permission={"bash": {"*": "allow", "printf *": "ask"}, "edit": "ask"})
    fe.wait_for(lambda: fe.extension_comms, what="the kernel's comm")
    assert fe.execute_cell("c0")["status"] == "ok"
    approving = fe.execute_cell_async("c1")
    below = fe.execute_cell_async("c2")
    reply = approve_until_done(fe, approving)["content"]
    assert reply["status"] == "ok", fe.text(approving)
    assert fe.done(below)["content"]["status"] == "ok" and "below hello plan cells" in fe.text(below)

    ids = ext.ids()
    sources = [ext.source(i) for i in ids]
    steps = [i for i, s in zip(ids, sources, strict=True) if s.startswith("%%agent --plan")]
    assert len(steps) == 3 and ids.index(steps[0]) > ids.index("c1") and ids.index("c2") == len(ids) - 1
    for number, cell_id in enumerate(steps, 1):
        shown = replaced_outputs(ext, cell_id)
        assert WIDGET_VIEW in shown[0][1].get("data", {}), "the live view is shown in the step's cell first"
        assert output_text(shown[0]).startswith(f"▶ Step {number} of 3")
        assert "(run by the cell that approved the plan)" in output_text(shown[0])
        final = ext.cell(cell_id)
        assert f"✓ Step {number} ticked" in output_text(final.outputs)
        assert 'class="ocnb-transcript"' in final.outputs[1]["data"]["text/html"]
        assert final.execution_count == reply["execution_count"], "the count of the cell that ran it"
    assert "Step 2 is done: 3" in output_text(ext.cell(steps[1]).outputs)
    text = fe.text(approving)
    assert "its 3 steps run now, each in its cell below" in text and "(shown in its cell below)" in text
    assert "Step 2 is done" not in text, "the transcripts are in the step cells, not here"

    again = fe.execute_cell(steps[1], 30)
    assert again["status"] == "ok"
    assert "Step 2 already ran right after the plan was approved" in output_text(again["outputs"])


def test_plan_run_with_the_extension_runs_the_steps_here_each_shown_in_its_cell(kernel):
    ext = FakeExtension([SETUP, APPROVING.replace("--agent plan", "--agent plan --bg"), "%agent plan run", BELOW])
    fe = kernel([], files={"plan_model.py": MODEL}, extension=ext, permission={"*": "allow"})
    fe.wait_for(lambda: fe.extension_comms, what="the kernel's comm")
    assert fe.execute_cell("c0")["status"] == "ok"
    planning = fe.execute_cell_async("c1")
    saved = lambda: any(ext.source(i).startswith("%%agent --plan") for i in ext.ids())  # noqa: E731
    assert approve_until_done(fe, planning, until=saved, choice="Save them as cells to run one by one")[
        "content"]["status"] == "ok"
    run = fe.execute_cell_async("c2")
    below = fe.execute_cell_async("c3")
    assert fe.done(run, 90)["content"]["status"] == "ok", fe.text(run)
    assert fe.done(below)["content"]["status"] == "ok"
    assert "below hello plan cells" in fe.text(below), "the steps ran before the cell queued after"
    steps = [i for i in ext.ids() if ext.source(i).startswith("%%agent --plan")]
    for number, cell_id in enumerate(steps, 1):
        assert f"✓ Step {number} ticked" in output_text(ext.cell(cell_id).outputs)
        assert "(run by %agent plan run)" in output_text(ext.cell(cell_id).outputs)
    assert [r[0] for r in kernel_value(fe, "plan_model.STEP_REQUESTS")] == ["1", "2", "3"]
