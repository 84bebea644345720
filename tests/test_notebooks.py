"""The notebooks run headless on the built-in scripted model, as CI runs them."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat import NotebookNode

from opencode_nb.tool.support.plandoc import parse_step_line

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

pytestmark = pytest.mark.timeout(300)


def headless_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_NB_") and k != "JPY_SESSION_NAME"}
    return {**env, "OPENCODE_NB_HEADLESS": "1", "OPENCODE_NB_DATA_DIR": str(tmp_path / "data"),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def run_in_order(notebook: NotebookNode, path: Path, env: dict[str, str]) -> NotebookNode:
    """Run the cells top to bottom as a person in a front end would, headless.

    nbclient runs its own copy of the notebook and tells the kernel nothing about the file, so the kernel is
    given the file (`OPENCODE_NB_NOTEBOOK`) and changes that; after each cell, the cells an agent inserted
    there are put into the copy at the same place, as a front end would show them, and run in their turn.
    """
    nbformat.write(notebook, path)
    client = NotebookClient(notebook, timeout=240, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    with client.setup_kernel(env={**env, "OPENCODE_NB_NOTEBOOK": str(path)}):
        index = 0
        while index < len(notebook.cells):
            client.execute_cell(notebook.cells[index], index)
            on_disk = nbformat.read(path, as_version=4).cells
            known = {cell.id for cell in notebook.cells}
            for position, cell in enumerate(on_disk):
                if cell.id not in known:
                    before = on_disk[position - 1].id if position else None
                    at = next((i + 1 for i, c in enumerate(notebook.cells) if c.id == before), 0)
                    notebook.cells.insert(at, cell)
                    known.add(cell.id)
            index += 1
    return notebook


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_a_shipped_notebook_carries_no_cells_of_a_plan_it_did_not_make(name):
    """A plan's cells name a plan of the run that saved them: in a fresh copy that plan does not exist, and
    Run All would queue its steps beside the cells the notebook's own plan inserts."""
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    step_cells = [i for i, c in enumerate(notebook.cells)
                  if c.cell_type == "code" and parse_step_line(c.source.partition("\n")[0]) is not None]
    plan_cells = [i for i, c in enumerate(notebook.cells) if "plan" in c.metadata.get("opencode_nb", {})]
    assert step_cells == [], f"{name}: cells {step_cells} are `%%agent --plan ID --step N` cells of an earlier run"
    assert plan_cells == [], f"{name}: cells {plan_cells} were inserted by an earlier run's plan"


def test_a_step_cell_is_recognised_by_its_first_line():
    assert parse_step_line("%%agent --plan 3td3c66m --step 1") == ("3td3c66m", 1)
    assert parse_step_line("%%agent --step 2 --plan p") == ("p", 2)
    assert parse_step_line("%%agent --agent plan") is None


def test_the_data_exploration_notebook_explores_in_a_sandbox_then_cleans_live_and_undoes(tmp_path):
    notebook = nbformat.read(NOTEBOOKS / "data_exploration.ipynb", as_version=4)
    client = NotebookClient(notebook, timeout=240, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute(env=headless_env(tmp_path))
    code = [c for c in notebook.cells if c.cell_type == "code"]

    def text(cell) -> str:
        return "\n".join(str(o.get("text") or o.get("data", {}).get("text/plain", "")) for o in cell.outputs)

    explore = text(code[2])
    assert "@data-explorer" in explore and "copy-on-write fork" in explore and "✓ variables df" in explore
    assert text(code[3]) == "(np.int64(3), ['OK', 'fault', 'ok'])", "the sandbox's fillna never reached df"
    cleaned = text(code[4])
    assert "Ran in your namespace: created clean" in cleaned and "the person's namespace" not in cleaned
    assert "allowed by policy" in cleaned
    assert text(code[5]) == "(38, 5)"
    assert "Unbound clean." in text(code[6])
    assert text(code[7]) == "(False, (42, 5))"


def test_plan_then_execute_saves_the_approved_plan_as_step_cells_and_runs_them_at_once(tmp_path):
    notebook = nbformat.read(NOTEBOOKS / "plan_then_execute.ipynb", as_version=4)
    run_in_order(notebook, tmp_path / "plan_then_execute.ipynb", headless_env(tmp_path))

    sources = [c.source for c in notebook.cells]
    asking = next(i for i, s in enumerate(sources) if s.startswith("%%agent --agent plan"))
    said = text(notebook.cells[asking])
    assert "Saved the plan as 2 steps in cells" in said and "saved as cells below this one" in said
    assert "The plan is approved: its 2 steps run now, here, one after another" in said
    assert "✓ Step 1 of 2" in said and "✓ Step 2 of 2" in said, "one progress block, both steps ticked"
    assert said.index("Step 1 done") < said.index("all checks passed")
    title, step1_head, step1, step2_head, step2 = notebook.cells[asking + 1:asking + 6]
    assert title.source.startswith("## Fix the inflated average") and step1_head.source.startswith("### Step 1 — ")
    assert step2_head.source.startswith("### Step 2 — Run `python check_stats.py`")
    plan_id = step1.source.split()[2]
    assert step1.source.startswith(f"%%agent --plan {plan_id} --step 1\nIn `stats.py`")
    assert step2.source.startswith(f"%%agent --plan {plan_id} --step 2\nRun `python check_stats.py`")
    # Run in their turn afterwards (as a person walking down the notebook would), they do not run twice.
    assert "Step 1 already ran right after the plan was approved" in text(step1)
    assert "Step 2 already ran right after the plan was approved" in text(step2)
    shown = text(notebook.cells[sources.index(next(s for s in sources if s.startswith("print(next(")))])
    assert "1. [x] In `stats.py`" in shown and "2. [x] Run `python check_stats.py`" in shown
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert "2/2 ticked" in text(code[-2])
    assert f"Every step of plan {plan_id} is ticked" in text(code[-1])
    assert not [c.source for c in code if any(o.output_type == "error" for o in c.outputs)]


def test_the_quickstart_ends_with_the_bug_fixed_when_the_plan_becomes_cells(tmp_path):
    """Given its notebook file, the kernel saves the approved plan as step cells, which run at once: the
    cell after the prompt finds the self-check passing."""
    notebook = nbformat.read(NOTEBOOKS / "quickstart.ipynb", as_version=4)
    run_in_order(notebook, tmp_path / "quickstart.ipynb", headless_env(tmp_path))
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert any(c.source.startswith("%%agent --plan") for c in code), "the plan became cells"
    prompt = next(c for c in code if c.source.startswith("%%agent\nThe average"))
    assert "✓ All 2 steps of plan" in text(prompt)
    check = next(c for c in code if "check_stats.py" in c.source and not c.source.startswith("%%agent"))
    assert "all checks passed" in text(check)
    assert not [c.source for c in code if any(o.output_type == "error" for o in c.outputs)]


def text(cell) -> str:
    return "\n".join(str(o.get("text") or o.get("data", {}).get("text/plain", "")) for o in cell.outputs)


def test_the_person_tools_notebook_has_data_explorer_and_build_call_the_persons_query(tmp_path):
    notebook = nbformat.read(NOTEBOOKS / "person_tools.ipynb", as_version=4)
    client = NotebookClient(notebook, timeout=240, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute(env=headless_env(tmp_path))
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert not [c.source for c in code if any(o.output_type == "error" for o in c.outputs)]
    listing = text(next(c for c in code if c.source == "%agent tool list"))
    assert "query — query(sql: str, limit: int = 20) -> DataFrame  [@tool]" in listing
    assert 'rule: ask (a catch-all "*": allow does not reach your functions)' in listing
    explorer = text(next(c for c in code if "Which customers spend the most?" in c.source))
    assert "@data-explorer — Top customers by spend" in explorer
    assert "✓ query sql='select customer, sum(amount)" in explorer and "0      Ada   52.0" in explorer
    assert "allowed by policy" not in explorer, "data-explorer's own rule allowed it: nobody was asked"
    build = text(next(c for c in code if "How many orders of each product?" in c.source))
    assert "✗ query" in build and 'Not called: limit was sent as "all" (string), but must be a valid integer' in build
    assert "0     tea       3" in build and "build asked for query: allowed once (allowed by policy" in build
    assert "no longer a tool for agents" in text(code[-1])


def test_the_fix_and_explain_notebook_explains_then_fixes_the_wrong_column_by_policy(tmp_path):
    """Headless, nobody reviews: `Agent.permission = allow` accepts the Fix's change, which replaces the failing
    cell's source in the notebook file and reruns it, so the cell below prints the fixed result."""
    notebook = nbformat.read(NOTEBOOKS / "fix_and_explain.ipynb", as_version=4)
    path = tmp_path / "fix_and_explain.ipynb"
    run_in_order(notebook, path, headless_env(tmp_path))
    code = [c for c in notebook.cells if c.cell_type == "code"]
    failing = next(c for c in code if "raises-exception" in c.metadata.get("tags", []))
    assert any(o.output_type == "error" and o.ename == "KeyError" for o in failing.outputs), "it failed, as told"
    explained = text(next(c for c in code if c.source == "%agent explain"))
    assert explained.index("What went wrong") < explained.index("Why") < explained.index("What to try")
    assert '`\'temp\'`' in explained and 'readings.groupby("site")["temp_c"].median()' in explained
    fixed = text(next(c for c in code if c.source == "%agent fix"))
    assert "accepted by policy" in fixed and "Waiting for your review" not in fixed
    on_disk = next(c for c in nbformat.read(path, as_version=4).cells if c.id == failing.id)
    assert on_disk.source == 'by_site = readings.groupby("site")["temp_c"].median()\nby_site', "quotes kept"
    assert not [o for o in on_disk.outputs if o.output_type == "error"], "its rerun replaced the error"
    assert text(code[-1]) == "Warmest site: south, median 13.25 °C\n"
    assert not [c.source for c in code if c is not failing and any(o.output_type == "error" for o in c.outputs)]
