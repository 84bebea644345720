"""Pending cell changes in place, in a real JupyterLab: a Fix's proposal shows as a diff inside the failed cell, where
Accept replaces the source and reruns it (and the fix's Undo takes it back), and Reject leaves the cell byte for
byte as it was; under `review: cells` three proposed edits are accepted at once with "Accept all (3)". The panels
read at 4.5:1 in both themes, are reached by the keyboard, and never reach the saved notebook.

The kernel's own `show_pending` is used throughout; the last test drives the page with `show_pending` requests made
from a cell and records the `decide_pending` requests it sends, so the page's half is pinned on its own too (an
insert's panel, a conflict's "Accept anyway", a kernel that refuses)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
import yaml

from .lab import KERNELSPEC_METADATA, Lab
from .test_cards_contrast import failing, measured, use_theme
from .test_own_notebook import THEMES, photograph

pytestmark = pytest.mark.e2e

FRAME = "%load_ext opencode_nb\nimport pandas as pd\nprices = pd.DataFrame({'price': [3, 5], 'item': ['tea', 'jam']})"
FAILS = "total = prices['prices'].sum()\nprint('total:', total)"
FIXED = "total = prices['price'].sum()\nprint('total:', total)"
NOTEBOOK_JS = "window.jupyterapp.shell.currentWidget.content"
SOURCE_JS = f"(i) => {NOTEBOOK_JS}.model.cells.get(i).sharedModel.getSource()"
PANELS = ".jp-NotebookPanel:not(.lm-mod-hidden) .ocnb-pending"
# Where a panel sits in its cell: the class names of the cell's children, in order.
LAYOUT_JS = """(el) => [...el.closest('.jp-Cell').children].map(c => c.classList.contains('ocnb-pending') ? 'PANEL'
  : c.classList.contains('jp-Cell-inputWrapper') ? 'input' : c.classList.contains('jp-Cell-outputWrapper') ? 'output'
  : '').filter(Boolean)"""


def write(lab: Lab, name: str, sources: list[str]) -> list[str]:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(KERNELSPEC_METADATA)
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in sources]
    nbformat.write(nb, lab.root / name)
    return [cell.id for cell in nb.cells]


def configure(lab: Lab, script: list[dict[str, Any]], **more: Any) -> None:
    (lab.root / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/e2e", "permission": {"*": "allow"}, "provider": {"scripted": {"script": script}},
        **more}))


def fix_script(cell_id: str) -> list[dict[str, Any]]:
    return [{"text": "The column is 'price'.", "tool_calls": [{"name": "notebook_edit", "input": {
        "action": "replace", "cell_id": cell_id, "source": FIXED}}]},
            {"text": "Proposed the renamed column; accept it to rerun the cell."}]


def run(lab: Lab, index: int, timeout: float = 60) -> None:
    lab.run_cell(index, key="Control+Enter")
    lab.wait_cell_done(index, timeout=timeout)


def source(lab: Lab, index: int) -> str:
    return lab.page.evaluate(SOURCE_JS, index)


def saved_cell(lab: Lab, name: str, cell_id: str) -> str:
    """The cell as the file holds it, as canonical JSON."""
    lab.save()
    cell = next(c for c in lab.read_notebook(name)["cells"] if c["id"] == cell_id)
    return json.dumps(cell, sort_keys=True)


def failed(lab: Lab, name: str) -> list[str]:
    """Open `name` with a kernel of its own and let its second cell fail; returns the cells' ids."""
    lab.shutdown_kernels()
    ids = write(lab, name, [FRAME, FAILS])
    configure(lab, fix_script(ids[1]))
    lab.open_notebook(name)
    run(lab, 0)
    run(lab, 1)
    lab.wait_output(1, "KeyError")
    return ids


def press_fix(lab: Lab, failed_id: str) -> Any:
    """Press Fix under the failed cell and wait for the proposal's panel in that cell; the Fix cell waits for the
    decision, saying so."""
    lab.cell(1).locator("button.ocnb-fix-button", has_text="Fix").click()
    lab.cell(f"%agent fix {failed_id}").wait_for(timeout=15_000)
    panel = lab.cell(1).locator(".ocnb-pending")
    panel.wait_for(timeout=60_000)
    lab.wait_output(2, f"Waiting for your review of change 1 in cell [{failed_id}]: Accept or Reject it there.")
    return panel


def test_a_fix_shows_its_diff_in_the_cell_and_accept_replaces_the_source_and_reruns_it(lab: Lab,
                                                                                        tmp_path: Path) -> None:
    panel = press_fix(lab, failed(lab, "accept.ipynb")[1])
    lab.save()
    lab.reload(wait_idle=False)  # a page that connects anew is sent the pending changes again (the Fix still waits)
    panel = lab.cell(1).locator(".ocnb-pending")
    panel.wait_for(timeout=15_000)
    assert panel.evaluate(LAYOUT_JS) == ["input", "PANEL", "output"], "between the cell's input and its outputs"
    assert "new source for this cell" in panel.locator(".ocnb-pending-heading").inner_text()
    assert panel.locator(".ocnb-diff-removed").all_inner_texts() == ["-total = prices['prices'].sum()"]
    assert panel.locator(".ocnb-diff-added").all_inner_texts() == ["+total = prices['price'].sum()"]
    assert panel.locator(".ocnb-accept-all-button:visible").count() == 0, "one change: no Accept all"
    rerun = panel.get_by_label("Run the cell after accepting")
    assert rerun.is_checked()
    assert source(lab, 1) == FAILS, "nothing changed before the person decides"

    for theme, background in THEMES:
        use_theme(lab, theme, background)
        texts = measured(lab, PANELS)
        assert {"Accept", "Reject", "Run the cell after accepting"} <= {t["text"] for t in texts}, texts
        assert failing(texts) == []
    use_theme(lab, *THEMES[0])
    photograph(lab, tmp_path, "pending-replace", show=panel)

    accept = panel.get_by_role("button", name="Accept", exact=True)
    accept.focus()
    lab.page.keyboard.press("Tab")
    assert lab.page.evaluate("() => document.activeElement.textContent") == "Reject"
    lab.page.keyboard.press("Shift+Tab")
    lab.page.keyboard.press("Enter")
    note = lab.cell(1).locator(".ocnb-decided")
    note.wait_for(timeout=30_000)
    assert panel.count() == 0, "a change no longer pending is taken out of view"
    assert "Accepted change" in note.inner_text()
    assert source(lab, 1) == FIXED
    lab.wait_output(1, "total: 8")
    assert "KeyError" not in lab.output_text(1)
    assert lab.cell(1).locator(".ocnb-fix-button").count() == 0, "the rerun passed: no Fix any more"
    photograph(lab, tmp_path, "pending-accepted", show=note)
    saved = json.dumps(lab.save()["cells"])
    assert "ocnb-pending" not in saved and "ocnb-decided" not in saved, "the panels are not part of the notebook"

    # The accepted change is part of the fix's run: that card's Undo puts the old source back.
    undo = lab.cell(2).locator(".ocnb-undo-button")
    undo.wait_for(timeout=15_000)
    assert "1 cell edited" in lab.cell(2).locator(".ocnb-undo").inner_text()
    undo.click()
    lab.cell(2).locator(".ocnb-undone").wait_for(timeout=15_000)
    assert source(lab, 1) == FAILS


def test_reject_leaves_the_cell_byte_for_byte_as_it_was(lab: Lab) -> None:
    ids = failed(lab, "reject.ipynb")
    before = saved_cell(lab, "reject.ipynb", ids[1])
    panel = press_fix(lab, ids[1])
    panel.get_by_role("button", name="Reject", exact=True).click()
    note = lab.cell(1).locator(".ocnb-decided")
    note.wait_for(timeout=30_000)
    assert "Rejected change" in note.inner_text() and "not changed" in note.inner_text()
    assert panel.count() == 0
    lab.wait_output(2, "Rejected change 1 to cell")  # said by the Fix cell, whose wait ends
    lab.wait_cell_done(2, timeout=30)
    time.sleep(1)  # nothing reruns or saves behind the note
    assert saved_cell(lab, "reject.ipynb", ids[1]) == before
    assert source(lab, 1) == FAILS


THREE = ["a = prices['prices'].sum()\nprint('a', a)", "b = prices['prices'].max()\nprint('b', b)",
         "c = prices['prices'].min()\nprint('c', c)"]


def test_accept_all_takes_three_proposed_edits_at_once(lab: Lab, tmp_path: Path) -> None:
    lab.shutdown_kernels()
    ids = write(lab, "three.ipynb", [FRAME, *THREE, "%%agent\nRename the column in the three cells."])
    edits = [{"name": "notebook_edit", "input": {"action": "replace", "cell_id": cell_id,
                                                 "source": src.replace("'prices'", "'price'")}}
             for cell_id, src in zip(ids[1:4], THREE, strict=True)]
    configure(lab, [{"text": "Renaming.", "tool_calls": edits}, {"text": "Proposed three edits."}], review="cells")
    lab.open_notebook("three.ipynb")
    run(lab, 0)
    run(lab, 4)
    lab.wait_output(4, "Proposed three edits.")
    panels = lab.notebook.locator(".ocnb-pending")
    for index in (1, 2, 3):
        lab.cell(index).locator(".ocnb-pending").wait_for(timeout=15_000)
    assert panels.count() == 3
    assert panels.locator(".ocnb-accept-all-button:visible").all_inner_texts() == ["Accept all (3)"] * 3
    photograph(lab, tmp_path, "pending-three", show=lab.cell(2))
    lab.cell(2).locator(".ocnb-accept-all-button").click()
    for index in (1, 2, 3):
        lab.cell(index).locator(".ocnb-decided").wait_for(timeout=30_000)
    assert panels.count() == 0
    assert [source(lab, i) for i in (1, 2, 3)] == [s.replace("'prices'", "'price'") for s in THREE]
    lab.wait_output(1, "a 8")
    lab.wait_output(2, "b 5")
    lab.wait_output(3, "c 3")


SHOW = """\
from opencode_nb.kernel import current
agent = current()
asked = []

def _decide(request, reply):
    asked.append({k: request.get(k) for k in ("n", "accept", "rerun", "force")})
    n = request.get("n")
    if n == 2 and not request.get("force"):
        reply({"decisions": [{"n": 2, "state": "conflict", "said": "Cell [x] was edited since; not applied."}]})
    elif n == 3:
        reply({"ok": False, "error": "The notebook cannot be reached yet."})
    else:
        reply({"decisions": [{"n": n, "state": "accepted" if request["accept"] else "rejected",
                              "said": f"Decided change {n}."}]})

agent.frontend.answer("decide_pending", _decide)
"""


def change(n: int, action: str, cell_id: str | None, **more: Any) -> dict[str, Any]:
    return {"n": n, "cell_id": cell_id, "action": action, "after": None, "cell_type": "code", "old_source": "",
            "new_source": "", "diff": "", "state": "pending", **more}


def test_the_page_shows_what_show_pending_sends_and_asks_decide_pending(lab: Lab, tmp_path: Path) -> None:
    lab.shutdown_kernels()
    configure(lab, [])
    ids = write(lab, "page.ipynb", [FRAME + "\n" + SHOW, "x = 1", "y = 2", "print(asked)"])
    lab.open_notebook("page.ipynb")
    run(lab, 0)
    long_line = "value = " + " + ".join(["1"] * 80)
    changes = [
        change(1, "insert", None, after=ids[1], new_source=f"print('hello')\n{long_line}"),
        change(2, "replace", ids[2], old_source="y = 2", new_source="y = 3",
               diff="--- before\n+++ after\n@@ -1 +1 @@\n-y = 2\n+y = 3\n"),
        change(3, "delete", ids[1], old_source="x = 1"),
    ]
    send = f"await current().frontend.request('show_pending', changes={changes!r})"
    lab.page.evaluate(f"(text) => {NOTEBOOK_JS}.widgets[3].model.sharedModel.setSource(text)", send)
    run(lab, 3)
    inserted = lab.cell(1).locator(".ocnb-pending-insert")
    inserted.wait_for(timeout=15_000)
    assert "a new code cell below this one" in inserted.inner_text()
    assert inserted.locator(".ocnb-diff-added").all_inner_texts()[0] == "+print('hello')"
    wrapped = inserted.locator(".ocnb-diff-added").nth(1)
    box = wrapped.bounding_box()
    assert box is not None and box["height"] > 30, "a long line wraps instead of running off"
    assert lab.cell(1).locator(".ocnb-pending-delete").locator(".ocnb-rerun-label:visible").count() == 0
    photograph(lab, tmp_path, "pending-page", show=inserted)

    # Accept with the box unticked; a conflict offers "Accept anyway"; a refusal is said and the panel stays.
    inserted.get_by_label("Run the cell after accepting").uncheck()
    inserted.get_by_role("button", name="Accept", exact=True).click()
    lab.cell(1).locator(".ocnb-decided", has_text="Decided change 1.").wait_for(timeout=15_000)
    replaced = lab.cell(2).locator(".ocnb-pending-replace")
    replaced.get_by_role("button", name="Accept", exact=True).click()
    replaced.locator(".ocnb-pending-note", has_text="edited since").wait_for(timeout=15_000)
    replaced.get_by_role("button", name="Accept anyway").click()
    lab.cell(2).locator(".ocnb-decided", has_text="Decided change 2.").wait_for(timeout=15_000)
    deleted = lab.cell(1).locator(".ocnb-pending-delete")
    deleted.get_by_role("button", name="Accept", exact=True).click()
    deleted.locator(".ocnb-pending-note", has_text="cannot be reached yet").wait_for(timeout=15_000)
    assert deleted.get_by_role("button", name="Accept", exact=True).is_enabled(), "asked again after a refusal"

    lab.page.evaluate(f"(text) => {NOTEBOOK_JS}.widgets[3].model.sharedModel.setSource(text)", "print(asked)")
    run(lab, 3)
    assert lab.output_text(3).strip() == str([
        {"n": 1, "accept": True, "rerun": False, "force": None}, {"n": 2, "accept": True, "rerun": True, "force": None},
        {"n": 2, "accept": True, "rerun": True, "force": True}, {"n": 3, "accept": True, "rerun": True, "force": None}])
    # The kernel says change 3 is no longer pending: its panel goes.
    gone = {**changes[2], "state": "gone"}
    lab.page.evaluate(f"(text) => {NOTEBOOK_JS}.widgets[3].model.sharedModel.setSource(text)",
                      f"await current().frontend.request('show_pending', changes=[{gone!r}])")
    run(lab, 3)
    deleted.wait_for(state="detached", timeout=15_000)
    assert lab.notebook.locator(".ocnb-pending").count() == 0
