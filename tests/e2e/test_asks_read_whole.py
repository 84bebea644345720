"""The asks of a person's own notebook (in `play/` of their git repository) read whole, in a real JupyterLab at
800 and 1,600 px wide, in the light theme and the dark one: no button label is cut, no hint inside a field is
cut mid-word, every coloured button's label keeps 4.5:1 against the button, a shell line is listed once as it
was written, and files are named as the card names them, from the notebook's folder."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.kernel.plans.test_approval_choice import SAVE_AS_CELLS
from tests.kernel.plans.test_steps import SETUP

from .lab import Lab
from .test_cards_contrast import CONTRAST_JS, failing, use_theme
from .test_own_notebook import LOOKED_AT, PLANNER, THEMES, own_config, play

pytestmark = pytest.mark.e2e
__all__ = ["play"]  # the fixture of the person's repository, shared with test_own_notebook

ASKS = [
    {"text": "Writing the notes.", "tool_calls": [
        {"name": "write", "input": {"path": "notes.md", "content": "# findings\n"}}]},
    {"tool_calls": [{"name": "bash", "input": {"command": "echo b > b.txt", "description": "Make b.txt"}}]},
    {"tool_calls": [{"name": "question", "input": {"questions": [{
        "question": "Which notes should come next?", "header": "Next", "multiple": True,
        "options": [{"label": "Summary", "description": "A short summary"},
                    {"label": "Open questions", "description": "What is still unclear"}]}]}}]},
    {"text": "Notes written."},
]
BUTTONS = ".ocnb-session .jupyter-button"

CUT_JS = """() => {
  const cut = [];
  const canvas = document.createElement('canvas').getContext('2d');
  for (const b of document.querySelectorAll('.ocnb-session .jupyter-button')) {
    if (!b.getClientRects().length) continue;
    const box = b.getBoundingClientRect();
    if (b.scrollWidth > b.clientWidth) cut.push(`${b.innerText.trim()}: ${b.clientWidth}px of ${b.scrollWidth}px`);
    if (box.right > window.innerWidth) cut.push(`${b.innerText.trim()}: past the page's edge`);
  }
  for (const input of document.querySelectorAll('.ocnb-session input[placeholder]')) {
    if (!input.getClientRects().length || !input.placeholder) continue;
    const style = getComputedStyle(input);
    canvas.font = style.font;
    const needs = canvas.measureText(input.placeholder).width;
    const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (needs > room) cut.push(`placeholder ${JSON.stringify(input.placeholder)}: ${room}px of ${needs}px`);
  }
  return cut;
}"""
"""Every visible button whose label, and every field whose hint, does not fit whole."""


def checked_everywhere(lab: Lab, where: Path, name: str, show: Any) -> None:
    """At both widths and in both themes: nothing cut, every button's label at 4.5:1 or more; photographed."""
    LOOKED_AT.mkdir(parents=True, exist_ok=True)
    for theme, background in THEMES:
        use_theme(lab, theme, background)
        for width in (800, 1600):
            lab.page.set_viewport_size({"width": width, "height": 1000})
            lab.page.wait_for_timeout(400)
            show.evaluate("el => el.scrollIntoView({block: 'center'})")
            lab.page.wait_for_timeout(200)
            shot = lab.screenshot(where / f"{name}-{width}-{theme.split()[-1].lower()}.png")
            shutil.copy(shot, LOOKED_AT / shot.name)
            assert lab.page.evaluate(CUT_JS) == [], f"{name} at {width} px, {theme}"
            labels = lab.page.evaluate(CONTRAST_JS, BUTTONS)
            assert labels, f"no button measured in {name}"
            assert failing(labels) == [], f"{name} at {width} px, {theme}"
    use_theme(lab, *THEMES[0])
    lab.page.set_viewport_size({"width": 1400, "height": 1000})


def fresh(lab: Lab, name: str, cells: list[str]) -> Any:
    lab.shutdown_kernels()
    lab.write_notebook(f"play/{name}", cells)
    return lab.open_notebook(f"play/{name}")


def test_every_ask_of_a_run_reads_whole_and_names_things_as_the_person_does(lab: Lab, play: Path,
                                                                            tmp_path: Path) -> None:
    own_config(play, ASKS)
    fresh(lab, "asks.ipynb", ["%load_ext opencode_nb", "%%agent\nWrite down what you found."])
    lab.run_cell(0, key="Control+Enter")
    lab.wait_cell_done(0, timeout=60)
    lab.run_cell(1, key="Control+Enter")
    cell = lab.cell(1)
    allow = cell.locator("button.jupyter-button:visible", has_text="Allow once")
    allow.wait_for(timeout=60_000)
    ask = cell.locator(".ocnb-ask").last
    assert ask.locator("li").all_inner_texts() == ["notes.md"], "the file as the card names it, from play/"
    checked_everywhere(lab, tmp_path, "write-ask", ask)
    allow.click()

    cell.locator(".ocnb-ask", has_text="echo b").wait_for(timeout=30_000)
    bash = cell.locator(".ocnb-ask", has_text="echo b").last
    assert bash.locator("li").all_inner_texts() == ["echo b > b.txt"], "the line once, as it was written"
    cell.locator("button.jupyter-button:visible", has_text="Allow once").click()

    summary = cell.locator("button.jupyter-button:visible", has_text="Summary")
    summary.wait_for(timeout=30_000)
    summary.click()  # a chosen option is coloured: its label is measured too
    lab.page.wait_for_timeout(300)
    checked_everywhere(lab, tmp_path, "question", summary)
    cell.locator("button.jupyter-button:visible", has_text="Submit").click()
    lab.wait_cell_done(1, timeout=60)
    lab.wait_output(1, "Notes written.")
    records = cell.locator(".ocnb-ask-record").all_inner_texts()
    assert any("edit notes.md — allowed once" in r for r in records), records
    assert any("bash echo b > b.txt — allowed once" in r for r in records), records
    assert not any("play/notes.md" in r or ", echo b" in r for r in records), records


def test_the_plan_question_reads_whole_and_names_the_plan_from_the_notebook(lab: Lab, play: Path,
                                                                            tmp_path: Path) -> None:
    own_config(play, [])
    (play / "plan_model.py").write_text(PLANNER)
    fresh(lab, "plan_whole.ipynb", ["%load_ext opencode_nb\n" + SETUP,
                                    "%%agent --agent plan\nPlan how to write and count a greeting."])
    lab.run_cell(0, key="Control+Enter")
    lab.wait_cell_done(0, timeout=60)
    lab.run_cell(1, key="Control+Enter")
    save = lab.cell(1).locator("button.jupyter-button:visible", has_text=SAVE_AS_CELLS)
    save.wait_for(timeout=60_000)
    shown = lab.output_text(1)
    assert "a/../" not in shown and "b/../" not in shown, "the plan's diff names its file as the person would"
    assert "--- ../.opencode/plans/" in shown
    assert "Anything to change or add? It goes with the button you click" in shown, "the hint is read whole"
    checked_everywhere(lab, tmp_path, "plan-question", save)
    save.click()
    lab.wait_cell_done(1, timeout=90)
