"""Plans as cells in a real kernel, headless, with the notebook file as the cell store (as under nbclient):
approving a plan writes its step cells under the calling cell, a step cell carries out its step and ticks it,
and `%agent plan run` runs what is left in order, stopping at the first failure. (Approving from a cell its
run holds, without `--bg`, also runs the steps at once: `test_approved.py`.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

from opencode_nb.kernel.magics.agent import parse_options
from opencode_nb.kernel.magics.subcommands import parse_plan_line, split_line
from opencode_nb.kernel.plans import steps as plans
from opencode_nb.session.models import AssistantMessage, MessageWithParts, ToolErrored, ToolPart, UserMessage
from tests.kernel.frontend import FakeExtension
from tests.kernel.plans.scripted_plan import MODEL

pytestmark = pytest.mark.timeout(120)

PLAN_CELL = "%%agent --agent plan --bg\nPlan how to write and count a greeting."
"""Headless, the cell awaits even a `--bg` prompt; the plan question is answered "Save them as cells to run one by
one" (`SAVE_AS_CELLS`), so the steps wait as cells, to be run one by one here."""
SAVE_AS_CELLS = ("from opencode_nb.kernel import current\n"
                 "current().workspace().questions.policy = lambda request: [['Save them as cells to run one by one']]")

SETUP = """from opencode_nb.kernel import current
from opencode_nb.provider.scripted import Scripted
import plan_model
current().workspace().providers.register("plans", Scripted(respond=plan_model.respond))
%config Agent.model = "plans/model"
%config Agent.permission = "allow"
"""


def notebook_file(project: Path, sources: list[str]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    path = project / "plan.ipynb"
    nbformat.write(nb, path)
    return path


def cells_of(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())["cells"]


def source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


@pytest.fixture
def planned(kernel, tmp_path):
    """A headless kernel whose notebook file holds the plan cell, run and approved: (frontend, notebook, plan id)."""
    project = tmp_path / "project"
    project.mkdir()
    nb = notebook_file(project, [PLAN_CELL, "print('below')"])
    fe = kernel([], render_views=False, files={"plan_model.py": MODEL},
                env={"OPENCODE_NB_HEADLESS": "1", "OPENCODE_NB_NOTEBOOK": str(nb)})
    assert fe.run(SETUP)["content"]["status"] == "ok"
    assert fe.run(SAVE_AS_CELLS)["content"]["status"] == "ok"
    msg = fe.execute(PLAN_CELL)
    assert fe.done(msg, 60)["content"]["status"] == "ok", fe.text(msg)
    first = next(source(c) for c in cells_of(nb) if source(c).startswith("%%agent --plan"))
    plan_id = re.match(r"%%agent --plan (\S+) --step 1", first).group(1)
    return fe, nb, plan_id


def step_source(nb: Path, number: int) -> str:
    return next(source(c) for c in cells_of(nb) if re.match(rf"%%agent --plan \S+ --step {number}\n", source(c)))


def kernel_value(fe, expression: str) -> Any:
    msg = fe.execute(f"import json as _j\nfrom opencode_nb.kernel import current as _c\nimport plan_model\n"
                     f"_ws = _c().workspace()\nprint(_j.dumps({expression}))")
    fe.done(msg)
    return json.loads(fe.text(msg).strip().splitlines()[-1])


TODOS = "[[t.content, t.status] for t in _ws.sessions.todos(_c().session_id)]"


def test_an_approved_plan_becomes_step_cells_under_the_calling_cell_and_a_step_ticks_when_done(planned):
    fe, nb, plan_id = planned
    cells = cells_of(nb)
    assert [source(c).splitlines()[0] for c in cells] == [
        "%%agent --agent plan --bg", "## Write and count a greeting",
        "### Step 1 — Write `hello.txt` containing the words hello plan cells.", f"%%agent --plan {plan_id} --step 1",
        "### Step 2 — Count the words in `hello.txt`.", f"%%agent --plan {plan_id} --step 2",
        "### Step 3 — Say goodbye.", f"%%agent --plan {plan_id} --step 3", "print('below')"]
    assert cells[3]["metadata"]["opencode_nb"]["plan"] == plan_id and cells[3]["metadata"]["opencode_nb"]["step"] == 1
    assert kernel_value(fe, TODOS) == [["Write `hello.txt` containing the words hello plan cells.", "pending"],
                                       ["Count the words in `hello.txt`.", "pending"], ["Say goodbye.", "pending"]]

    step1 = fe.execute(step_source(nb, 1))
    assert fe.done(step1, 60)["content"]["status"] == "ok", fe.text(step1)
    assert "▶ Step 1 of 3" in fe.text(step1) and "Step 1 is done" in fe.text(step1)
    plan_file = nb.parent / ".opencode" / "plans" / f"{plan_id}.md"
    lines = plan_file.read_text().splitlines()
    assert lines[4] == "1. [x] Write `hello.txt` containing the words hello plan cells."
    assert lines[5] == "2. Count the words in `hello.txt`.", "only the step that ran is ticked"
    assert (nb.parent / "hello.txt").read_text() == "hello plan cells"
    assert kernel_value(fe, TODOS)[0] == ["Write `hello.txt` containing the words hello plan cells.", "completed"]
    progress = json.loads((plan_file.parent / f"{plan_id}.progress.json").read_text())
    assert progress["steps"]["1"]["status"] == "done" and progress["steps"]["1"]["runs"] == 1
    assert progress["steps"]["1"]["summary"].startswith("Step 1 is done:") and progress["steps"]["1"]["duration_s"] >= 0

    step2 = fe.execute(step_source(nb, 2))
    assert fe.done(step2, 60)["content"]["status"] == "ok", fe.text(step2)
    requests = kernel_value(fe, "plan_model.STEP_REQUESTS")
    assert [r[0] for r in requests] == ["1", "2"]
    second = requests[1][1]
    assert second.startswith("This is step 2 of 3 of the approved plan")
    assert "Count the words in `hello.txt`." in second and "<plan>\n# Write and count a greeting" in second
    assert "- Step 1 (done): Step 1 is done:" in second, "the earlier step's result reaches the model"
    assert "--plan" not in second
    assert "Step 2 is done: 3" in fe.text(step2)


def test_a_step_run_again_is_marked_as_a_re_run_for_the_model_and_the_person(planned):
    fe, nb, _ = planned
    fe.run(step_source(nb, 1), 60)
    again = fe.execute(step_source(nb, 1))
    assert fe.done(again, 60)["content"]["status"] == "ok"
    assert "re-run: run 2 of this step" in fe.text(again)
    text = kernel_value(fe, "plan_model.STEP_REQUESTS")[-1][1]
    assert "It is a re-run: this step was started 1 time before; its last run ended done" in text


def test_an_edited_step_cell_is_what_the_model_is_asked_to_do(planned):
    fe, _, plan_id = planned
    edited = f"%%agent --plan {plan_id} --step 3\nSay goodbye in French."
    assert fe.run(edited, 60)["content"]["status"] == "ok"
    text = kernel_value(fe, "plan_model.STEP_REQUESTS")[-1][1]
    assert "follow it):\nSay goodbye in French.\n" in text


def test_a_failing_step_fails_its_cell_with_where_to_resume_and_is_not_ticked(planned):
    fe, nb, plan_id = planned
    fe.run("import plan_model; plan_model.FAIL.add(2)")
    failed = fe.execute(step_source(nb, 2))
    reply = fe.done(failed, 60)
    assert reply["content"]["status"] == "error"
    assert f"%agent plan run {plan_id} --from 2" in reply["content"]["evalue"]
    assert "did not finish" in reply["content"]["evalue"] and "it is not ticked" in reply["content"]["evalue"]
    plan_file = nb.parent / ".opencode" / "plans" / f"{plan_id}.md"
    assert "[x]" not in plan_file.read_text()
    progress = json.loads((plan_file.parent / f"{plan_id}.progress.json").read_text())
    assert progress["steps"]["2"]["status"] == "failed" and "overloaded" in progress["steps"]["2"]["error"]
    assert kernel_value(fe, TODOS)[1][1] == "pending"


def test_plan_run_from_a_step_runs_the_rest_in_order_and_stops_at_the_first_failure(planned):
    fe, nb, plan_id = planned
    fe.run("import plan_model; plan_model.FAIL.add(3)")
    run = fe.execute("%agent plan run --from 2")
    reply = fe.done(run, 90)
    assert reply["content"]["status"] == "error"
    assert f"%agent plan run {plan_id} --from 3" in reply["content"]["evalue"]
    assert [r[0] for r in kernel_value(fe, "plan_model.STEP_REQUESTS")] == ["2", "3"]
    lines = (nb.parent / ".opencode" / "plans" / f"{plan_id}.md").read_text().splitlines()
    assert lines[4].startswith("1. Write"), "--from 2 leaves step 1 alone"
    assert lines[5].startswith("2. [x] Count") and lines[6].startswith("3. Say goodbye")
    assert "Step 2 is done:" in fe.text(run) and "✓ Step 2 of 3" in fe.text(run) and "✗ Step 3 of 3" in fe.text(run)

    fe.run("import plan_model; plan_model.FAIL.clear()")
    rest = fe.execute("%agent plan run")
    assert fe.done(rest, 90)["content"]["status"] == "ok", fe.text(rest)
    assert [r[0] for r in kernel_value(fe, "plan_model.STEP_REQUESTS")] == ["2", "3", "1", "3"], \
        "without --from, the unticked steps run, in order"
    listing = fe.execute("%agent plan")
    fe.done(listing)
    assert f"▶ {plan_id}" in fe.text(listing) and "3/3 ticked" in fe.text(listing)


def test_plan_cells_saves_the_plan_again_under_the_cell_that_asks(planned):
    fe, nb, plan_id = planned
    here = "%agent plan cells"
    cells = cells_of(nb)
    cells.append(nbformat.v4.new_code_cell(here))
    data = json.loads(nb.read_text())
    data["cells"] = cells
    nb.write_text(json.dumps(data))
    msg = fe.execute(here)
    assert fe.done(msg)["content"]["status"] == "ok", fe.text(msg)
    assert f"Saved plan {plan_id} as 7 cells" in fe.text(msg)
    after = [source(c).splitlines()[0] for c in cells_of(nb)]
    assert after[-8:] == [here, "## Write and count a greeting", after[2], after[3], after[4], after[5], after[6],
                          after[7]]


def test_step_cells_that_name_no_known_plan_or_misuse_options_say_what_to_do(kernel):
    fe = kernel([], render_views=False, env={"OPENCODE_NB_HEADLESS": "1"})
    unknown = fe.execute("%%agent --plan nope-123 --step 1\nDo it.")
    assert fe.done(unknown)["content"]["status"] == "ok", "a stale step cell is not the person's error"
    shown = fe.text(unknown).strip()
    assert shown.startswith("Not run: this cell is step 1 of plan nope-123, which is unknown here")
    assert "%agent plan lists this project's plans" in shown and len(shown.splitlines()) == 1
    lonely = fe.execute("%%agent --step 2\nDo it.")
    assert fe.done(lonely)["content"]["status"] == "error"
    assert "--step needs --plan" in fe.reply(lonely)["content"]["evalue"]
    nothing = fe.execute("%agent plan")
    fe.done(nothing)
    assert "No plans yet" in fe.text(nothing)


def test_run_all_goes_on_past_a_step_cell_of_an_unknown_plan(kernel):
    fe = kernel([], render_views=False)
    stale = fe.execute("%%agent --plan nope --step 1\nIn `stats.py`, fix mean().")
    after = fe.execute("x = 1\nprint('after', x)")  # queued behind it, as Run All sends cells
    assert fe.done(stale)["content"]["status"] == "ok"
    assert "Not run: this cell is step 1 of plan nope, which is unknown here" in fe.text(stale)
    assert fe.done(after)["content"]["status"] == "ok"
    assert fe.text(after).strip() == "after 1"


def test_a_known_plans_step_number_it_does_not_have_stays_an_error(planned):
    fe, _, plan_id = planned
    wrong = fe.execute(f"%%agent --plan {plan_id} --step 9\nDo it.")
    reply = fe.done(wrong)
    assert reply["content"]["status"] == "error" and "9" in reply["content"]["evalue"]


KNOWN_PLAN = """from opencode_nb.kernel import current
_ws = current().workspace()
_s = _ws.sessions.create()
_f = _ws.root / ".opencode" / "plans" / f"{_s.slug}.md"
_f.parent.mkdir(parents=True, exist_ok=True)
_f.write_text("# Greet\\n\\n1. Say hello.\\n")
print(_s.slug)
"""


def test_a_step_cell_a_newer_plan_replaced_says_so_and_the_run_goes_on(kernel, tmp_path):

    ext = FakeExtension(["print('first')"])
    fe = kernel([{"text": "Hello."}], permission={"*": "allow"}, render_views=False, extension=ext)
    fe.wait_for(lambda: fe.extension_comms, what="the kernel's comm")
    made = fe.execute(KNOWN_PLAN)
    assert fe.done(made)["content"]["status"] == "ok", fe.text(made)
    plan_id = fe.text(made).strip().splitlines()[-1]
    step = f"%%agent --plan {plan_id} --step 1\nSay hello."

    gone = fe.execute(step, metadata={"cellId": "deleted-by-a-newer-plan"})
    after = fe.execute("print('after')")
    assert fe.done(gone)["content"]["status"] == "ok", fe.text(gone)
    assert f"Not run: this cell, step 1 of plan {plan_id}, is no longer in the notebook" in fe.text(gone)
    assert "%agent plan lists the plans" in fe.text(gone)
    assert fe.done(after)["content"]["status"] == "ok" and fe.text(after).strip() == "after"
    plan_file = tmp_path / "project" / ".opencode" / "plans" / f"{plan_id}.md"
    assert "[x]" not in plan_file.read_text(), "the replaced cell carried out nothing"

    ext.nb.cells.append(nbformat.v4.new_code_cell(step, id="still-here"))
    here = fe.execute_cell("still-here", 60)
    assert here["status"] == "ok", here
    text = "\n".join(str(o.get("text") or o.get("data", {}).get("text/plain", "")) for o in here["outputs"])
    assert "▶ Step 1 of 1" in text and "✓ Step 1 ticked" in text, "a step cell still in the notebook runs"


# ------------------------------------------------------------------------------------------ without a kernel


def test_plan_options_are_checked_before_anything_runs():
    options = parse_options("--plan fix-1a2b --step 2 --model demo/x")
    assert (options.plan, options.step, options.model) == ("fix-1a2b", 2, "demo/x")
    from IPython.core.error import UsageError

    for bad, says in (("--step 2", "--step needs --plan"), ("--plan p", "needs --step N"),
                      ("--plan p --step 0", "step number"), ("--plan p --step 1 --agent plan", "--agent"),
                      ("--plan p --step 1 --bg", "--bg")):
        with pytest.raises(UsageError, match=re.escape(says)):
            parse_options(bad)


def test_plan_subcommands_and_prompts_that_start_with_plan_are_told_apart():
    assert split_line("plan") == ("plan", [])
    assert split_line("plan list") == ("plan", ["list"])
    assert split_line("plan run fix-1a2b --from 2") == ("plan", ["run", "fix-1a2b", "--from", "2"])
    assert split_line("plan cells") == ("plan", ["cells"])
    assert split_line("plan this first") == (None, [])
    assert split_line("plan run the tests then deploy") == (None, [])
    assert parse_plan_line(["run", "--from", "3"]) == ("run", None, 3)
    assert parse_plan_line(["run", "x", "--from", "3"]) == ("run", "x", 3)


def _answer(parts: list[Any], **message: Any) -> MessageWithParts:
    return MessageWithParts(message=AssistantMessage(session_id="s", parent_id="m0", agent="build", model="x/y",
                                                     **message), parts=parts)


def test_how_a_steps_run_ended_is_judged_from_its_messages():
    user = MessageWithParts(message=UserMessage(session_id="s", agent="build"), parts=[])
    floor = user.message.id
    rejected = ToolPart(session_id="s", message_id="m", call_id="c", tool="bash",
                        state=ToolErrored(input={}, error="The user rejected permission", started_at=0.0))
    assert plans.judge([user, _answer([], finish="stop")], floor) == ("done", "")
    assert plans.judge([user, _answer([rejected], finish="tool-calls")], floor) == \
        ("rejected", "the bash call was rejected")
    from opencode_nb.session.models import MessageError

    stopped = _answer([], finish="aborted", error=MessageError(kind="aborted", message="The run was stopped."))
    assert plans.judge([user, stopped], floor) == ("stopped", "it was stopped")
    assert plans.judge([user], floor) == ("failed", "the agent gave no answer")
