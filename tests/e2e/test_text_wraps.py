"""What the kernel prints for a person reads whole in JupyterLab: `%agent help`, `%agent mcp`, `%agent config`,
the configuration's notices and a mistyped line's usage error wrap between words at 800 px and at 1,600 px, in
the light theme and the dark one; no word is split across two lines, and a help explanation is not broken by
hand a few words after the page broke it. The usage error is shown on the page's error background, as stderr
would be, and its cell still fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from opencode_nb.views.shorten import LONGEST_WORD

from .lab import Lab
from .test_cards_contrast import use_theme
from .test_person_text import SPLIT_WORDS_JS

pytestmark = pytest.mark.e2e

SHOTS = Path(os.environ.get("OPENCODE_NB_E2E_SHOTS", "/tmp/shots"))
CELLS = ["%load_ext opencode_nb", "%agent help", "%agent mcp", "%agent config", "%agent sesions"]
REFUSED = len(CELLS) - 1
BREAKS_JS = """root => [...root.querySelectorAll('*')].map(el => getComputedStyle(el))
    .filter(s => s.wordBreak === 'break-all').length"""
ROWS_JS = """(root, needle) => {
    // The rendered lines of the block holding `needle`: how many, and whether one ends mid-sentence by hand.
    const block = [...root.querySelectorAll('.ocnb-text > div')].find(d => d.textContent.includes(needle));
    return block ? block.textContent : null;
}"""


def test_kernel_text_wraps_between_words_at_two_widths_in_both_themes(lab: Lab) -> None:
    project = lab.root / "wraps"
    project.mkdir()
    (project / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/demo",
        "mcp": {"warehouse": {"type": "local", "command": ["warehouse-server-that-is-not-installed", "--stdio"]}},
        "agent": {"build": {"descriptoin": "a misspelt key, reported as a notice before the cell's output"}}}))
    lab.write_notebook("wraps/text.ipynb", CELLS)
    lab.open_notebook("wraps/text.ipynb")
    for index in range(len(CELLS)):
        lab.run_cell(index)
        lab.wait_cell_done(index)
    lab.wait_output(1, "%agent skills")
    lab.wait_output(REFUSED, "did you mean %agent sessions?")
    refused = lab.cell(REFUSED).locator(".jp-Cell-outputWrapper")
    assert refused.locator("pre").count() == 0, "the usage error is prose, not stderr's pre"
    assert refused.locator(".ocnb-text").evaluate("el => getComputedStyle(el).backgroundColor") not in (
        "rgba(0, 0, 0, 0)", "transparent"), "shown on the error background"
    SHOTS.mkdir(parents=True, exist_ok=True)
    for theme, background in (("JupyterLab Light", "white"), ("JupyterLab Dark", "#111")):
        use_theme(lab, theme, background)
        for width in (800, 1600):
            lab.page.set_viewport_size({"width": width, "height": 1000})
            lab.page.wait_for_timeout(400)
            for index in range(1, len(CELLS)):
                out = lab.cell(index).locator(".jp-Cell-outputWrapper")
                where = f"{CELLS[index]} at {width}px, {theme}"
                assert out.evaluate(BREAKS_JS) == 0, f"{where}: an element breaks words anywhere"
                # A run longer than a word (a path, a command line) may wrap inside, as the cards' text does.
                split = [w for w in out.evaluate(SPLIT_WORDS_JS) if len(w) <= LONGEST_WORD]
                assert split == [], f"{where}: words split across lines: {split[:10]}"
            help_out = lab.cell(1).locator(".jp-Cell-outputWrapper")
            skills = help_out.evaluate(ROWS_JS, "%agent skills")
            assert skills is not None and "the ones a nearer skill shadows" in skills, "one explanation, one block"
            name = f"{width}-{theme.split()[-1].lower()}"
            lab.screenshot(SHOTS / f"text-wraps-{name}.png")
            for index in (1, 2, REFUSED):
                lab.cell(index).locator(".jp-Cell-outputWrapper").screenshot(
                    path=str(SHOTS / f"text-wraps-{name}-{CELLS[index].split()[-1]}.png"))
