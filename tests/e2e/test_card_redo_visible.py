"""After a card's Undo, its report and its Redo button both show whole, at a narrow and a wide page: a long report
moves the button to a line of its own, it never squeezes the button out of view."""

from __future__ import annotations

from pathlib import Path

import pytest

from .lab import Lab
from .test_finished_card_undo import configure

pytestmark = pytest.mark.e2e

MANY_FILES = [
    {"text": "Writing notes.", "tool_calls": [
        {"name": "write", "input": {"path": f"notes_with_a_rather_long_name_{n}.md", "content": f"note {n}\n"}}
        for n in range(6)]},
    {"text": "Wrote six notes."},
]
REDO_CLIPPED_JS = """(bar) => {
  const button = bar.querySelector('.ocnb-redo-button');
  if (button === null) return 'no Redo button';
  const own = button.getBoundingClientRect(), around = bar.getBoundingClientRect();
  if (button.scrollWidth > button.clientWidth + 1) return `label clipped: ${button.scrollWidth}px`;
  if (own.right > around.right + 1 || own.left < around.left - 1) return `outside its bar: ${own.left}-${own.right}`;
  if (own.right > window.innerWidth) return `past the page's edge: ${own.right} > ${window.innerWidth}`;
  return '';
}"""


@pytest.mark.parametrize("width", [800, 1600])
def test_the_redo_button_after_a_long_undo_report_is_shown_whole(lab: Lab, width: int, tmp_path: Path) -> None:
    lab.page.set_viewport_size({"width": width, "height": 900})
    configure(lab, MANY_FILES)
    name = f"redo_{width}.ipynb"
    lab.write_notebook(name, ["%load_ext opencode_nb", "%%agent\nWrite six notes."])
    lab.open_notebook(name)
    lab.run_cell(0)
    lab.wait_cell_done(0)
    lab.run_cell(1, key="Control+Enter")
    lab.wait_cell_done(1, timeout=60)
    bar = lab.cell(1).locator(".ocnb-undo")
    bar.locator(".ocnb-undo-button").wait_for(timeout=15_000)
    bar.locator(".ocnb-undo-button").click()
    bar.locator(".ocnb-redo-button").wait_for(timeout=15_000)
    assert "notes_with_a_rather_long_name_5.md" in bar.inner_text()
    lab.screenshot(tmp_path / f"redo_{width}.png")
    assert bar.evaluate(REDO_CLIPPED_JS) == ""
