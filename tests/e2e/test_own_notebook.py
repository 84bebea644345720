"""A person's own notebook, in `play/` of their git repository with its own `opencode.yaml`, in a real JupyterLab:
the agent works in the notebook's folder, edits and commands ask first until "Always allow", the one config line
gives OpenCode's defaults back, mistyped lines and misspelt restrictions stop before an agent runs, a second
prompt's card says which session it continues, and a plan is approved by one question whose buttons do what they
say. Every state is photographed at 800 and 1,600 px wide, in the light theme and the dark one."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.kernel.plans.test_approval_choice import KEEP_PLANNING, MODEL, RUN_NOW, SAVE_AS_CELLS
from tests.kernel.plans.test_steps import SETUP

from .lab import Lab
from .test_cards_contrast import use_theme

pytestmark = pytest.mark.e2e

LOOKED_AT = Path(os.environ.get("OPENCODE_NB_E2E_SHOTS", "/tmp/shots"))
"""Where every screenshot is copied as well, to be looked at after the run."""
THEMES = (("JupyterLab Light", "white"), ("JupyterLab Dark", "#111"))
RESTORE = {"edit": "allow", "bash": "allow"}
PLANNER = MODEL.replace("(\\.opencode/plans/", "((?:\\.\\./)*\\.opencode/plans/")
"""The plan model of the kernel tests, reading the plan's path as a notebook in a subfolder is given it
(`../.opencode/plans/x.md`)."""
assert PLANNER != MODEL

TODOS = {"name": "todowrite", "input": {"todos": [
    {"content": "Write the findings to notes.md", "status": "in_progress", "priority": "high"},
    {"content": "Say where the notes are", "status": "pending", "priority": "low"}]}}
FIRST_PROMPT = [
    {"text": "Writing the notes.", "tool_calls": [
        TODOS, {"name": "write", "input": {"path": "notes.md", "content": "# findings\n"}},
        {"name": "bash", "input": {"command": "pwd", "description": "Say where I am"}}]},
    {"text": "Wrote notes.md in this folder."},
]
SECOND_PROMPT = [
    {"text": "Adding a second note.", "tool_calls": [
        {"name": "write", "input": {"path": "more.md", "content": "# more\n"}},
        {"name": "bash", "input": {"command": "echo b > b.txt", "description": "Make b.txt"}}]},
    {"text": "Added more.md and b.txt."},
]
QUIET = [
    {"tool_calls": [{"name": "bash", "input": {"command": "echo x > by_shell.txt", "description": "Make a file"}},
                    {"name": "write", "input": {"path": "by_write.txt", "content": "x\n"}}]},
    {"text": "Both files made."},
]


@pytest.fixture(scope="module")
def play(lab: Lab) -> Path:
    """The person's repository is the lab's root; their notebooks and `opencode.yaml` are in `play/`."""
    subprocess.run(["git", "init", "-q", str(lab.root)], check=True)
    (lab.root / "src").mkdir(exist_ok=True)
    (lab.root / "src" / "stats.py").write_text("def mean(values):\n    return sum(values) / len(values)\n")
    folder = lab.root / "play"
    folder.mkdir(exist_ok=True)
    return folder


def own_config(play: Path, script: list[dict[str, Any]], **more: Any) -> None:
    """An `opencode.yaml` as a person writes one: the model, and nothing about permissions unless given."""
    (play / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/own", "provider": {"scripted": {"script": script}}, **more}))


def open_fresh(lab: Lab, name: str, cells: list[str]) -> Any:
    """Open `play/<name>` with a kernel of its own (the others are stopped: two cores, one person)."""
    lab.shutdown_kernels()
    lab.write_notebook(f"play/{name}", cells)
    return lab.open_notebook(f"play/{name}")


def run(lab: Lab, index: int, timeout: float = 60) -> None:
    lab.run_cell(index, key="Control+Enter")
    lab.wait_cell_done(index, timeout=timeout)


def photograph(lab: Lab, where: Path, name: str, show: Any = None) -> None:
    """The page at 800 and 1,600 px wide, light and dark, into the test's tmp dir and the folder looked at.

    The notebook scrolls inside the page, so `show` (a locator) is scrolled to the middle of the view first."""
    LOOKED_AT.mkdir(parents=True, exist_ok=True)
    for theme, background in THEMES:
        use_theme(lab, theme, background)
        for width in (800, 1600):
            lab.page.set_viewport_size({"width": width, "height": 1000})
            lab.page.wait_for_timeout(400)
            if show is not None:
                show.evaluate("el => el.scrollIntoView({block: 'center'})")
                lab.page.wait_for_timeout(200)
            shot = lab.screenshot(where / f"{name}-{width}-{theme.split()[-1].lower()}.png")
            shutil.copy(shot, LOOKED_AT / shot.name)
    use_theme(lab, *THEMES[0])
    lab.page.set_viewport_size({"width": 1400, "height": 1000})


def test_the_agent_works_in_the_notebooks_folder_and_asks_first_until_always(lab: Lab, play: Path,
                                                                             tmp_path: Path) -> None:
    own_config(play, FIRST_PROMPT + SECOND_PROMPT)
    nb = open_fresh(lab, "mine.ipynb", ["%load_ext opencode_nb", "%%agent\nWrite down what you found.",
                                        "%%agent\nAdd a second note."])
    run(lab, 0)
    lab.run_cell(1, key="Control+Enter")
    always = lab.cell(1).locator("button.jupyter-button", has_text="Always allow")
    always.wait_for(timeout=60_000)
    assert "Notebook defaults:" in lab.output_text(1) and lab.output_text(1).count("Notebook defaults:") == 1
    assert "# findings" in lab.output_text(1), "the ask shows the diff of the file it would write"
    photograph(lab, tmp_path, "1-write-asks", show=always)
    always.click()
    lab.wait_cell_done(1, timeout=60)
    lab.wait_output(1, "Wrote notes.md in this folder.")
    assert (play / "notes.md").read_text() == "# findings\n" and not (lab.root / "notes.md").exists()
    lab.cell(1).get_by_text("output (1 line)").first.click()  # the command's output is folded
    lab.wait_output(1, os.path.realpath(play))  # bash's pwd printed the notebook's folder
    first = lab.output_text(1)
    assert " write notes.md ✓" in first, f"the card names the file from the notebook: {first}"
    lab.page.locator('.jp-FileBrowser-toolbar [data-command="filebrowser:refresh"]').first.click()
    lab.page.locator(".jp-DirListing-content").get_by_text("notes.md", exact=True).wait_for(timeout=15_000)
    photograph(lab, tmp_path, "1-written-in-play", show=lab.cell(1).get_by_text("output (1 line)").first)

    lab.run_cell(2, key="Control+Enter")
    allow_once = lab.cell(2).locator("button.jupyter-button", has_text="Allow once")
    allow_once.wait_for(timeout=60_000)  # the echo asks; the write before it did not, after "Always allow"
    header = lab.cell(2).locator(".ocnb-header").first.inner_text()
    assert "continues “Write down what you found.”" in header, header
    assert "new session" not in header, header
    second = lab.output_text(2)
    assert "Write the findings to notes.md" not in second, "the first run's todo list is not on the new card"
    assert "Notebook defaults:" not in second, "said once per kernel"
    assert lab.cell(2).locator("button.jupyter-button", has_text="Always allow").count() == 1, \
        "only the echo asks; the write is quiet"
    assert (play / "more.md").exists()
    photograph(lab, tmp_path, "5-second-prompt-running", show=lab.cell(2).locator(".ocnb-header").first)
    allow_once.click()
    lab.wait_cell_done(2, timeout=60)
    lab.wait_output(2, "Added more.md and b.txt.")
    assert (play / "b.txt").exists()
    finished = lab.cell(2).locator(".ocnb-header").first.inner_text()
    assert "Write down what you found" in finished and "new session" not in finished, finished
    assert "Write the findings to notes.md" not in lab.output_text(2)
    assert nb.locator("button.jupyter-button:visible", has_text="Allow once").count() == 0
    photograph(lab, tmp_path, "5-second-prompt-done", show=lab.cell(2).locator(".jp-Cell-outputWrapper"))


def test_the_one_config_line_gives_back_opencodes_defaults(lab: Lab, play: Path, tmp_path: Path) -> None:
    own_config(play, QUIET, permission=RESTORE)
    open_fresh(lab, "quiet.ipynb", ["%load_ext opencode_nb", "%%agent\nMake both files."])
    run(lab, 0)
    run(lab, 1)
    lab.wait_output(1, "Both files made.")
    shown = lab.output_text(1)
    assert "Notebook defaults:" not in shown
    assert lab.cell(1).locator("button.jupyter-button", has_text="Allow once").count() == 0, "nothing asked"
    assert (play / "by_shell.txt").exists() and (play / "by_write.txt").exists()
    photograph(lab, tmp_path, "2-restored-defaults")


def test_a_mistyped_line_and_a_misspelt_restriction_stop_before_an_agent_runs(lab: Lab, play: Path,
                                                                              tmp_path: Path) -> None:
    own_config(play, [{"text": "An agent ran."}])
    open_fresh(lab, "mistakes.ipynb", ["%load_ext opencode_nb", "%agent sesions", "%agent run a command"])
    run(lab, 0)
    run(lab, 1)
    lab.wait_output(1, "did you mean %agent sessions?")
    assert "An agent ran." not in lab.output_text(1) and lab.cell(1).locator(".ocnb-header").count() == 0
    good = yaml.safe_load((play / "opencode.yaml").read_text())
    (play / "opencode.yaml").write_text(yaml.safe_dump({**good, "permisions": {"bash": "deny"}}))
    run(lab, 2)
    lab.wait_output(2, "blocked")
    said = lab.output_text(2)
    assert "permission" in said.replace("permisions", ""), f"the spelling meant is named: {said}"
    assert "An agent ran." not in said and lab.cell(2).locator(".ocnb-header").count() == 0
    photograph(lab, tmp_path, "3-mistakes")


def test_a_plan_is_approved_by_one_question_and_saving_it_as_cells_runs_nothing(lab: Lab, play: Path,
                                                                                 tmp_path: Path) -> None:
    own_config(play, [])
    (play / "plan_model.py").write_text(PLANNER)
    open_fresh(lab, "plan.ipynb", ["%load_ext opencode_nb\n" + SETUP,
                                   "%%agent --agent plan\nPlan how to write and count a greeting.",
                                   "import plan_model; print('steps run:', plan_model.STEP_REQUESTS)"])
    run(lab, 0)
    lab.run_cell(1, key="Control+Enter")
    save = lab.cell(1).locator("button.jupyter-button", has_text=SAVE_AS_CELLS)
    save.wait_for(timeout=60_000)
    lab.page.wait_for_timeout(500)
    offered = [b.strip() for b in lab.notebook.locator("button.jupyter-button:visible").all_inner_texts()]
    assert [b for b in offered if b in (RUN_NOW, SAVE_AS_CELLS, KEEP_PLANNING)] == [RUN_NOW, SAVE_AS_CELLS,
                                                                                      KEEP_PLANNING], offered
    for unclear in ("Yes", "No", "Save as cells", "Submit", "Dismiss"):
        assert unclear not in offered, f"{unclear!r} beside the plan's three choices"
    photograph(lab, tmp_path, "7-plan-question", show=save)
    save.click()
    lab.wait_cell_done(1, timeout=90)
    steps = lab.cells().filter(has=lab.page.locator(".jp-InputArea", has_text="%%agent --plan"))
    steps.nth(2).wait_for(timeout=15_000)  # the cells are inserted one after another
    assert steps.count() == 3, "one cell per step"
    for index in range(3):
        assert steps.nth(index).locator(".jp-OutputArea-output").count() == 0, "a saved step waits for the person"
    below = lab.cells().count() - 1
    run(lab, below)
    lab.wait_output(below, "steps run: []")
    photograph(lab, tmp_path, "7-plan-saved-as-cells", show=steps.first)
