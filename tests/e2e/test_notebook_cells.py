"""A person in JupyterLab with the extension: the agents read, change and run the live notebook, and a plan
becomes cells that run one by one.

The model is `cells_model.respond`, registered in the kernel as provider `e2e`; it answers from what really
happened (the plan file's path, the id of the cell it inserted, the output of the cell it ran).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from .lab import Lab

pytestmark = pytest.mark.e2e

HERE = Path(__file__).parent

SETUP = """%load_ext opencode_nb
from opencode_nb.kernel import current
from opencode_nb.provider.scripted import Scripted
import cells_model
current().workspace().providers.register("e2e", Scripted(respond=cells_model.respond))
%config Agent.model = "e2e/model"
print("ready")"""


@pytest.fixture(scope="module")
def lab_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """These pages are about cells and plans, not approvals: the person's global config turns the notebook's
    ask-first defaults off with the line the README gives."""
    xdg = tmp_path_factory.mktemp("xdg")
    (xdg / "opencode_nb").mkdir()
    (xdg / "opencode_nb" / "opencode.yaml").write_text("permission: {edit: allow, bash: allow}\n")
    return {"OPENCODE_NB_DATA_DIR": str(tmp_path_factory.mktemp("ocnb-data")), "XDG_CONFIG_HOME": str(xdg)}


@pytest.fixture(scope="module")
def lab_pythonpath() -> list[str]:
    return [str(HERE)]


def test_the_extension_says_hello_and_an_inserted_cell_runs_and_survives_a_reload(lab: Lab) -> None:
    lab.write_notebook("cells.ipynb", [
        SETUP,
        "from opencode_nb.kernel import current\nimport json\n"
        "print(json.dumps(current().presence.frontend))",
        "%%agent\nAdd a cell that prints six times seven, then run it.",
    ])
    nb = lab.open_notebook("cells.ipynb")
    lab.run_cell(0)
    lab.wait_output(0, "ready")
    lab.run_cell(1)
    lab.wait_output(1, '"capabilities"')
    hello = json.loads(lab.output_text(1).strip().splitlines()[-1])
    assert hello["hello"] == "jupyterlab" and "run_cells" in hello["capabilities"]
    assert hello["path"].endswith("cells.ipynb")

    lab.run_cell(2, key="Control+Enter")
    allow = nb.locator("button.jupyter-button", has_text="Allow once")
    allow.first.wait_for(timeout=30_000)
    assert lab.cells().count() == 3, "nothing is inserted before the person allows it"
    allow.first.click()
    # The new cell appears right under the calling cell, with the agent's mark in its metadata.
    new_cell = lab.cell("print(6 * 7)")
    new_cell.wait_for(timeout=15_000)
    assert lab.cells().nth(3).inner_text().find("print(6 * 7)") >= 0
    allow.first.wait_for(timeout=30_000)  # notebook_run asks too
    allow.first.click()
    lab.wait_cell_done(2, timeout=60)
    lab.wait_output(2, "The new cell printed 42")
    lab.wait_output("print(6 * 7)", "42")

    # The extension saves what the agents changed by itself (nobody pressed Ctrl+S), so a reload keeps the
    # inserted cell and its output.
    deadline = time.monotonic() + 10
    while not any("42" in json.dumps(c.get("outputs", [])) for c in lab.saved_cells("cells.ipynb")
                  if "print(6 * 7)" in "".join(c["source"])):
        assert time.monotonic() < deadline, "the inserted cell and its output were never saved"
        time.sleep(0.1)
    lab.reload()
    lab.cell("print(6 * 7)").wait_for(timeout=30_000)
    lab.wait_output("print(6 * 7)", "42")
    saved = lab.read_notebook("cells.ipynb")
    inserted = [c for c in saved["cells"] if "print(6 * 7)" in "".join(c["source"])]
    assert inserted and inserted[0]["metadata"]["opencode_nb"]["session"]


def test_an_approved_plan_becomes_cells_that_tick_their_steps_one_by_one(lab: Lab) -> None:
    lab.write_notebook("plan.ipynb", [SETUP, "%%agent --agent plan --bg\nPlan how to write and count a greeting."])
    nb = lab.open_notebook("plan.ipynb")
    lab.run_cell(0)
    lab.wait_output(0, "ready")
    lab.run_cell(1, key="Control+Enter")
    yes = nb.locator("button.jupyter-button", has_text="Save them as cells to run one by one")
    yes.first.wait_for(timeout=30_000)
    yes.first.click()
    lab.wait_cell_done(1, timeout=60)

    # Under the calling cell: the plan's title, then per step a markdown cell and a step cell.
    lab.cell("--step 1").wait_for(timeout=15_000)
    lab.cell("--step 2").wait_for(timeout=15_000)  # the page draws inserted cells one after another
    sources = [lab.cells().nth(i).locator(".jp-InputArea").inner_text() for i in range(lab.cells().count())]
    joined = "\n".join(sources)
    assert "Write and count a greeting" in joined and "--step 2" in joined
    assert sources.index(next(s for s in sources if "--step 1" in s)) > 1

    plans = list((lab.root / ".opencode" / "plans").glob("*.md"))
    assert len(plans) == 1
    lab.run_cell("--step 1", key="Control+Enter")
    lab.wait_cell_done("--step 1", timeout=60)
    assert (lab.root / "hello.txt").read_text() == "hello plan cells"
    assert "[x]" in plans[0].read_text().splitlines()[4]
    assert "[x]" not in plans[0].read_text().splitlines()[5]

    lab.run_cell("--step 2", key="Control+Enter")
    lab.wait_cell_done("--step 2", timeout=60)
    lab.wait_output("--step 2", "Step 2 is done: 3")
    assert all("[x]" in line for line in plans[0].read_text().splitlines()[4:6])


def test_plan_run_has_the_notebook_run_the_remaining_steps_after_its_cell(lab: Lab) -> None:
    """`%agent plan run` runs the steps of a plan kept as cells (`--bg`) one by one in the kernel, each shown in
    its own cell, which the extension saves; the plan file ends with every step ticked."""
    for stale in (lab.root / ".opencode" / "plans").glob("*"):
        stale.unlink()
    (lab.root / "hello.txt").unlink(missing_ok=True)
    lab.write_notebook("run.ipynb", [SETUP, "%%agent --agent plan --bg\nPlan how to write and count a greeting.",
                                     "%agent plan run"])
    nb = lab.open_notebook("run.ipynb")
    lab.run_cell(0)
    lab.wait_output(0, "ready")
    lab.run_cell(1, key="Control+Enter")
    nb.locator("button.jupyter-button", has_text="Save them as cells to run one by one").first.click(timeout=30_000)
    lab.wait_cell_done(1, timeout=60)
    lab.cell("--step 2").wait_for(timeout=15_000)

    last = lab.cells().count() - 1  # the plan's cells went in above it
    assert lab.cell(last).locator(".jp-InputArea").inner_text().strip().endswith("%agent plan run")
    lab.run_cell(last, key="Control+Enter")
    lab.wait_output(last, re.compile(r"[Ss]teps? 1.*2"), timeout=30)
    plan = next((lab.root / ".opencode" / "plans").glob("*.md"))
    deadline = time.monotonic() + 90
    while not all("[x]" in line for line in plan.read_text().splitlines()[4:6]):
        assert time.monotonic() < deadline, plan.read_text()
        time.sleep(0.2)
    lab.wait_output("--step 2", "Step 2 is done: 3")
    assert (lab.root / "hello.txt").read_text() == "hello plan cells"
    deadline = time.monotonic() + 15
    while True:  # the front end saves after each step it ran: the file ends with step 2's run
        step2 = next((c for c in lab.saved_cells("run.ipynb") if "--step 2" in "".join(c["source"])), None)
        if step2 is not None and step2["execution_count"] is not None:
            break
        assert time.monotonic() < deadline, "the front end did not save after running the steps"
        time.sleep(0.2)
    assert "Step 2 is done: 3" in json.dumps(step2["outputs"])
