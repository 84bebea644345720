"""A person opens each shipped notebook, fresh, in JupyterLab, presses Run All and answers every approval with
a click: the run ends with every code cell run, no error anywhere, and the story told to its end (for the
plan notebooks: the approved plan's steps ran in their own cells before the cells below them, the bug is
fixed and every step of the plan is ticked)."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import require_browser
from .lab import Lab

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
APPROVALS = ("Yes", "Run the steps now", "Allow once")
"""What a person clicks to let the story go on: plan mode's answer, the plan's approval and a permission's."""
ACCEPT = ".ocnb-pending .ocnb-accept-button:not([disabled]):not([data-ocnb-clicked])"
"""A proposed cell change's Accept, in the panel inside the cell it changes (a Fix waits for it)."""
RERUN_JS = ("c.executionCount ?? ((c.getMetadata('tags') || []).includes('raises-exception') && c.outputs.length "
            "? 'rerun' : null)")
"""A code cell's count; `rerun` for a cell that failed on purpose and was rerun by an accepted fix: the kernel ran
it while the Fix's cell held it, so it has the rerun's outputs and no count."""
BUGGY = "return sum(values) / (len(values) - 1)"
FIXED = "return sum(values) / len(values)"


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kernels' temporary folder, where the notebooks' sample projects are copied."""
    return tmp_path_factory.mktemp("kernel-tmp")


@pytest.fixture(scope="module")
def lab_env(tmp_path_factory: pytest.TempPathFactory, scratch: Path) -> dict[str, str]:
    return {"OPENCODE_NB_DATA_DIR": str(tmp_path_factory.mktemp("ocnb-data")), "TMPDIR": str(scratch)}


@pytest.fixture
def lab(tmp_path: Path, lab_env: dict[str, str]) -> Iterator[Lab]:
    """A JupyterLab of its own for each notebook, as a person opening one fresh would have. (In one shared
    Lab, with the kernels of the notebooks opened before reconnecting as the page loaded anew, the last cell
    once ran and showed its output but kept no execution count.)"""
    require_browser()
    root = tmp_path / "lab-root"
    root.mkdir()
    with Lab(root, env=lab_env, expose_app=True) as started:
        yield started


def run_all_clicking_approvals(lab: Lab, timeout_s: float = 300) -> list[str]:
    """Run All, then click each approval as it appears, until every code cell shows an execution count and
    the kernel is idle; returns the labels clicked, in order."""
    # Not awaited: the command's promise settles only when the last cell has run.
    lab.page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    clicked: list[str] = []
    deadline = time.monotonic() + timeout_s
    settled_since: float | None = None
    while True:
        buttons = [(label, lab.notebook.locator("button.jupyter-button:not([disabled]):not([data-ocnb-clicked])",
                                                has_text=re.compile(rf"^\s*{re.escape(label)}\s*$")))
                   for label in APPROVALS]
        for label, found in [*buttons, ("Accept", lab.notebook.locator(ACCEPT))]:
            button = found.first.element_handle(timeout=500) if found.count() else None
            if button is not None and button.is_visible():
                button.evaluate("el => { el.dataset.ocnbClicked = '1'; }")  # the same button is not clicked twice
                button.scroll_into_view_if_needed(timeout=5000)
                button.click(timeout=5000)
                clicked.append(label)
        # From the notebook's model: cells far from the viewport are drawn lazily, their prompts empty.
        state = lab.page.evaluate("""() => {
            const cells = [...window.jupyterapp.shell.currentWidget.content.model.cells].filter(c => c.type === 'code');
            return {counts: cells.map(c => COUNT),
                    busy: cells.some(c => c.executionState === 'running')};
        }""".replace("COUNT", RERUN_JS))
        done = not state["busy"] and all(isinstance(count, int) or count == "rerun" for count in state["counts"])
        idle = lab.page.locator(".jp-StatusBar-Widget").get_by_text(re.compile(r"\|\s*Idle\s*$")).count() > 0
        now = time.monotonic()
        if done and idle:
            settled_since = settled_since or now
            if now - settled_since > 2.0:
                return clicked
        else:
            settled_since = None
        assert now < deadline, f"Run All did not end: counts {state['counts']}, clicked {clicked}"
        time.sleep(0.2)


def text_of(cell: dict[str, Any]) -> str:
    parts = []
    for output in cell.get("outputs", []):
        value = output.get("text") or output.get("data", {}).get("text/plain", "")
        parts.append("".join(value) if isinstance(value, list) else str(value))
    return "\n".join(parts)


def source_of(cell: dict[str, Any]) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def saved_after_run_all(lab: Lab, name: str) -> list[dict[str, Any]]:
    """Every code cell ran and none shows an error; returns the cells as saved."""
    cells = lab.save()["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert all(isinstance(c.get("execution_count"), int) or rerun_by_a_fix(c) for c in code), \
        [(source_of(c)[:40], c.get("execution_count")) for c in code]
    failed = [(source_of(c)[:60], text_of(c)[-300:]) for c in code for o in c.get("outputs", [])
              if o["output_type"] == "error" or (o["output_type"] == "stream" and o.get("name") == "stderr")]
    assert failed == [], f"{name}: error output in {failed}"
    return cells


def rerun_by_a_fix(cell: dict[str, Any]) -> bool:
    """A cell that fails on purpose (`raises-exception`) and that an accepted Fix reran: its outputs, no count."""
    return "raises-exception" in cell.get("metadata", {}).get("tags", []) and bool(cell.get("outputs"))


def assert_fixed_and_ticked(scratch: Path, steps: list[dict[str, Any]]) -> None:
    """The sample project whose plan the step cells ran has its bug fixed and every step of the plan ticked."""
    plan_id = source_of(steps[0]).split()[2]
    [plan] = scratch.rglob(f".opencode/plans/{plan_id}.md")
    stats = (plan.parents[2] / "stats.py").read_text()
    assert FIXED in stats and BUGGY not in stats, stats
    numbered = [line for line in plan.read_text().splitlines() if re.match(r"^\d+\. ", line)]
    assert numbered and all(line.split(" ", 1)[1].startswith("[x]") for line in numbered), plan.read_text()


def steps_ran_in_their_cells(cells: list[dict[str, Any]], asking: int) -> list[dict[str, Any]]:
    """The step cells right under the approving cell, each holding its run; returned in order."""
    steps = [c for c in cells[asking + 1:] if c["cell_type"] == "code" and source_of(c).startswith("%%agent --plan")]
    assert len(steps) == 2, [source_of(c)[:40] for c in cells]
    for number, step in enumerate(steps, 1):
        shown = text_of(step)
        assert f"▶ Step {number} of 2" in shown and f"✓ Step {number} ticked" in shown, shown[-500:]
        html = "".join(o.get("data", {}).get("text/html", "") for o in step["outputs"])
        assert 'class="ocnb-transcript"' in html, "the step's cell holds its transcript"
        assert step["execution_count"] == cells[asking]["execution_count"], "counted as the cell that ran it"
    return steps


def fresh_copy(lab: Lab, name: str) -> None:
    shutil.copy(NOTEBOOKS / name, lab.root / name)


def quickstart(cells: list[dict[str, Any]], clicked: list[str], scratch: Path) -> None:
    assert "Yes" in clicked and "Run the steps now" in clicked and "Allow once" in clicked, clicked
    asking = next(i for i, c in enumerate(cells) if source_of(c).startswith("%%agent\nThe average"))
    steps = steps_ran_in_their_cells(cells, asking)
    assert "all checks passed" in text_of(steps[1])
    check = next(c for c in cells if "check_stats.py" in source_of(c) and c["cell_type"] == "code"
                 and not source_of(c).startswith("%%agent"))
    assert "all checks passed" in text_of(check), "the cell after the prompt ran after the steps"
    assert_fixed_and_ticked(scratch, steps)


def plan_then_execute(cells: list[dict[str, Any]], clicked: list[str], scratch: Path) -> None:
    assert "Run the steps now" in clicked and "Allow once" in clicked, clicked
    asking = next(i for i, c in enumerate(cells) if source_of(c).startswith("%%agent --agent plan"))
    steps = steps_ran_in_their_cells(cells, asking)
    assert "Step 1 done" in text_of(steps[0]) and "all checks passed" in text_of(steps[1])
    printed = next(c for c in cells if source_of(c).startswith("print(next("))
    assert "1. [x] In `stats.py`" in text_of(printed) and "2. [x] Run `python check_stats.py`" in text_of(printed)
    code = [c for c in cells if c["cell_type"] == "code"]
    assert "2/2 ticked" in text_of(code[-2]) and "is ticked" in text_of(code[-1])
    assert_fixed_and_ticked(scratch, steps)


def data_exploration(cells: list[dict[str, Any]], clicked: list[str], scratch: Path) -> None:
    assert "Allow once" in clicked, clicked  # build's python in your namespace
    code = [c for c in cells if c["cell_type"] == "code"]
    assert text_of(code[3]).strip() == "(np.int64(3), ['OK', 'fault', 'ok'])", "the sandbox never touched df"
    assert text_of(code[5]).strip() == "(38, 5)", "the cleaned frame the person allowed"
    assert "Unbound clean." in text_of(code[6])
    assert text_of(code[7]).strip() == "(False, (42, 5))"


def fix_and_explain(cells: list[dict[str, Any]], clicked: list[str], scratch: Path) -> None:
    assert clicked == ["Accept"], clicked
    code = [c for c in cells if c["cell_type"] == "code"]
    failing = next(c for c in code if rerun_by_a_fix(c))
    assert source_of(failing) == 'by_site = readings.groupby("site")["temp_c"].median()\nby_site'
    assert "south    13.25" in text_of(failing), "the rerun's result replaced the KeyError"
    explained = text_of(next(c for c in code if source_of(c) == "%agent explain"))
    assert explained.index("What went wrong") < explained.index("Why") < explained.index("What to try"), explained
    fixed = text_of(next(c for c in code if source_of(c) == "%agent fix"))
    assert fixed.index(f"Waiting for your review of change 1 in cell [{failing['id']}]") < fixed.index(
        f"Accepted change 1: replaced the source of cell [{failing['id']}]; it ran without an error."), fixed
    assert text_of(code[-1]).strip() == "Warmest site: south, median 13.25 °C", "it ran after the Accept"


STORIES = {"quickstart.ipynb": quickstart, "plan_then_execute.ipynb": plan_then_execute,
           "data_exploration.ipynb": data_exploration, "fix_and_explain.ipynb": fix_and_explain}
"""How each notebook's story ends, beyond every cell run without an error."""


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_run_all_on_a_fresh_copy_with_only_clicks_runs_every_cell_and_tells_the_whole_story(
        lab: Lab, scratch: Path, name: str) -> None:
    fresh_copy(lab, name)
    lab.open_notebook(name)
    clicked = run_all_clicking_approvals(lab)
    cells = saved_after_run_all(lab, name)
    story = STORIES.get(name)
    if story is not None:
        story(cells, clicked, scratch)


def test_the_plan_notebooks_have_their_story_checked():
    assert {"quickstart.ipynb", "plan_then_execute.ipynb"} <= {p.name for p in NOTEBOOKS.glob("*.ipynb")}
