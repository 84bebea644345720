"""Approving a plan in a notebook is one question whose three buttons say what happens, and each does exactly
that, in a real kernel with the JupyterLab extension: "Run the steps now" runs them in this run, "Save them as
cells to run one by one" inserts the cells and runs nothing, "Keep planning" inserts nothing and gives the
plan agent the person's words. While steps run, their progress is one block updated in place."""

from __future__ import annotations

import time

import pytest

from tests.kernel.frontend import FakeExtension, FakeFrontend
from tests.kernel.plans.scripted_plan import MODEL
from tests.kernel.plans.test_approved import output_text
from tests.kernel.plans.test_steps import SETUP, kernel_value

pytestmark = pytest.mark.timeout(150)

RUN_NOW = "Run the steps now"
SAVE_AS_CELLS = "Save them as cells to run one by one"
KEEP_PLANNING = "Keep planning"

APPROVING = "%%agent --agent plan\nPlan how to write and count a greeting."
BELOW = "print('below')"


def start(kernel) -> tuple[FakeFrontend, FakeExtension]:
    ext = FakeExtension([SETUP, APPROVING, BELOW])
    fe = kernel([], files={"plan_model.py": MODEL}, extension=ext, permission={"*": "allow"})
    fe.wait_for(lambda: fe.extension_comms, what="the kernel's comm")
    assert fe.execute_cell("c0")["status"] == "ok"
    return fe, ext


def plan_question_buttons(fe: FakeFrontend) -> list[str]:
    """The descriptions of every enabled button shown while the plan question waits."""
    fe.wait_button(RUN_NOW, timeout=60)
    fe.wait_button(KEEP_PLANNING)
    time.sleep(0.3)  # the rest of the prompt's widgets open right after its last button
    with fe._lock:
        return [s["description"] for s in fe.models.values()
                if s.get("_model_name") == "ButtonModel" and not s.get("disabled") and s.get("description")]


def step_cells(ext: FakeExtension) -> list[str]:
    return [i for i in ext.ids() if ext.source(i).startswith("%%agent --plan")]


def answer(fe: FakeFrontend, label: str, words: str = "") -> None:
    if words:
        plan_question_buttons(fe)
        field = next(cid for cid, s in fe.models.items() if s.get("_model_name") == "TextModel")
        fe.set_value(field, value=words)
    fe.click(fe.wait_button(label))


def test_the_plan_question_offers_three_choices_that_say_what_happens_and_nothing_beside_them(kernel):
    fe, _ = start(kernel)
    approving = fe.execute_cell_async("c1")
    shown = plan_question_buttons(fe)
    assert [b for b in shown if b in (RUN_NOW, SAVE_AS_CELLS, KEEP_PLANNING)] == [RUN_NOW, SAVE_AS_CELLS,
                                                                                    KEEP_PLANNING]
    for unclear in ("Yes", "No", "Save as cells", "Submit", "Dismiss"):
        assert unclear not in shown, f"{unclear!r} is offered beside the plan's three choices"
    answer(fe, KEEP_PLANNING)
    fe.done(approving, 60)


def test_run_the_steps_now_runs_every_step_in_this_run_before_the_cells_below(kernel):
    fe, ext = start(kernel)
    approving = fe.execute_cell_async("c1")
    below = fe.execute_cell_async("c2")
    answer(fe, RUN_NOW)
    assert fe.done(approving, 90)["content"]["status"] == "ok", fe.text(approving)
    assert fe.done(below)["content"]["status"] == "ok"
    assert [r[0] for r in kernel_value(fe, "plan_model.STEP_REQUESTS")] == ["1", "2", "3"]
    cells = step_cells(ext)
    assert len(cells) == 3 and all(ext.cell(i).outputs for i in cells), "each step shows in a cell of its own"
    assert "below" in fe.text(below)


def test_save_them_as_cells_inserts_the_steps_and_runs_none_of_them(kernel):
    fe, ext = start(kernel)
    approving = fe.execute_cell_async("c1")
    below = fe.execute_cell_async("c2")
    answer(fe, SAVE_AS_CELLS)
    assert fe.done(approving, 90)["content"]["status"] == "ok", fe.text(approving)
    assert fe.done(below)["content"]["status"] == "ok"
    cells = step_cells(ext)
    assert len(cells) == 3 and all(ext.cell(i).outputs == [] for i in cells), "the cells wait for the person"
    assert kernel_value(fe, "plan_model.STEP_REQUESTS") == [], "no step ran"
    told = kernel_value(fe, "plan_model.BUILD_TOLD")
    assert told and "Do not carry out any step now" in told[-1]
    assert "The plan is approved: its" not in fe.text(approving)

    first = fe.execute_cell(cells[0], 60)
    assert first["status"] == "ok"
    ran = [r[0] for r in kernel_value(fe, "plan_model.STEP_REQUESTS")]
    assert ran == ["1"], "running a step's cell runs that step only"


def test_keep_planning_inserts_nothing_and_the_plan_agent_goes_on_with_the_persons_words(kernel):
    fe, ext = start(kernel)
    approving = fe.execute_cell_async("c1")
    answer(fe, KEEP_PLANNING, words="Count the letters too.")
    assert fe.done(approving, 60)["content"]["status"] == "ok", fe.text(approving)
    assert step_cells(ext) == [] and kernel_value(fe, "plan_model.STEP_REQUESTS") == []
    read = kernel_value(fe, "plan_model.PLANNER_READ")
    assert len(read) == 1 and "Count the letters too." in read[0]
    assert kernel_value(fe, "plan_model.BUILD_TOLD") == [], "the build agent never took over"
    assert kernel_value(fe, "_ws.sessions.current_agent(_c().session_id)") == "plan"


def test_words_typed_without_a_choice_keep_planning_with_them(kernel):
    fe, ext = start(kernel)
    approving = fe.execute_cell_async("c1")
    plan_question_buttons(fe)
    field = next(cid for cid, s in fe.models.items() if s.get("_model_name") == "TextModel")
    fe.set_value(field, value="Make step 3 say goodbye in French.")
    answer(fe, KEEP_PLANNING)
    assert fe.done(approving, 60)["content"]["status"] == "ok"
    assert "Make step 3 say goodbye in French." in kernel_value(fe, "plan_model.PLANNER_READ")[0]
    assert step_cells(ext) == []


# ---------------------------------------------------------------------------------------------- progress


def test_the_progress_of_running_steps_is_one_block_updated_in_place(kernel):
    fe, _ = start(kernel)
    approving = fe.execute_cell_async("c1")
    answer(fe, RUN_NOW)
    assert fe.done(approving, 90)["content"]["status"] == "ok", fe.text(approving)
    blocks = [m for m in fe.final_outputs(approving) if "ocnb-plan-progress" in
              m["content"].get("data", {}).get("text/html", "")]
    assert len(blocks) == 1, "one block"
    updates = [m for m in fe.outputs(approving) if m["msg_type"] == "update_display_data"
               and "ocnb-plan-progress" in m["content"].get("data", {}).get("text/html", "")]
    assert len(updates) >= 3, "updated in place as each step starts and ends"
    plain = blocks[0]["content"]["data"]["text/plain"]
    assert [line.split()[0] for line in plain.splitlines() if line.lstrip()[:1] in "✓▶·✗■"][-3:] == ["✓"] * 3
    html = blocks[0]["content"]["data"]["text/html"]
    assert "<pre" not in html, "no pre-wrapped monospace: the front end wraps the words"
    loose = [m for m in fe.final_outputs(approving) if m is not blocks[0]
             and any(w in m["content"].get("data", {}).get("text/plain", "") for w in ("▶ Step", "✓ Step", "ticked"))]
    assert loose == [], "no loose progress lines beside the block"


# ---------------------------------------------------------------------------------------------- in the background


def test_run_the_steps_now_from_a_background_prompt_runs_each_step_in_its_own_cell_once_the_prompt_ends(
        kernel, tmp_path):
    ext = FakeExtension([SETUP, APPROVING.replace("--agent plan", "--agent plan --bg"), BELOW])
    fe = kernel([], files={"plan_model.py": MODEL}, extension=ext, permission={"*": "allow"})
    fe.wait_for(lambda: fe.extension_comms, what="the kernel's comm")
    assert fe.execute_cell("c0")["status"] == "ok"
    approving = fe.execute_cell_async("c1")
    assert fe.done(approving)["content"]["status"] == "ok", "a --bg prompt's cell ends at once"
    answer(fe, RUN_NOW)

    def ticked() -> bool:
        cells = step_cells(ext)
        return len(cells) == 3 and all("ticked in" in output_text(ext.cell(i).outputs) for i in cells)

    fe.wait_for(ticked, 120, "every step ticked in its own cell")
    cells = step_cells(ext)
    counts = [ext.cell(i).execution_count for i in cells]
    assert None not in counts and counts == sorted(set(counts)), "each step ran as its own cell, in order"
    assert [r[0] for r in kernel_value(fe, "plan_model.STEP_REQUESTS")] == ["1", "2", "3"]
    project = tmp_path / "project"
    assert (project / "hello.txt").read_text() == "hello plan cells", "the first step's change is made"
    [plan] = (project / ".opencode" / "plans").glob("*.md")
    assert all("[x]" in line for line in plan.read_text().splitlines()[4:7]), "every step is ticked in the plan"
    with ext.lock:
        asked = [r["cell_ids"] for r in ext.requests if r["action"] == "run_cells"]
    assert asked == [cells], "the notebook ran the step cells, as Shift+Enter on each would"
