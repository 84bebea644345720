"""`review: cells` on a plan's edits, in a real JupyterLab: an approved plan's step, carried out by the build agent in
its step cell, edits two cells with notebook_edit; each edit shows as a pending panel in its own cell and the notebook
(saved to disk) is unchanged until the person decides; accepting one and rejecting the other leaves exactly the
accepted one changed, and the step's Undo puts it back."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from .lab import Lab
from .test_pending_panels import NOTEBOOK_JS, configure, run, source, write

pytestmark = pytest.mark.e2e

SAVE_SETTLE_S = 1.5
"""Longer than the extension's save delay (save.ts, 400 ms) and its save."""
SLUG = "e2e-review"
PLAN = """# Tidy the two sums

Goal: both sums print with a label.

1. Give each sum cell a label in what it prints.
"""
SETUP = f"""%load_ext opencode_nb
from opencode_nb.kernel import current
_ws = current().workspace()
_plan = _ws.sessions.create()
_ws.sessions.update(_plan, slug={SLUG!r})"""
FIRST = "a = 1 + 2\nprint(a)"
SECOND = "b = 3 + 4\nprint(b)"
STEP = f"%%agent --plan {SLUG} --step 1\nGive each sum cell a label in what it prints."


def labelled(text: str) -> str:
    name = text[0]
    return text.replace(f"print({name})", f"print('{name} =', {name})")


def saved(lab: Lab, name: str) -> dict[str, str]:
    """Each cell of the saved file, as canonical JSON, by id. The extension saves shortly after each change the
    kernel makes; a Ctrl+S while that save is in flight makes JupyterLab ask about a file "changed on disk", so
    the extension's save is let finish first."""
    time.sleep(SAVE_SETTLE_S)
    lab.save()
    return {c["id"]: json.dumps(c, sort_keys=True) for c in lab.read_notebook(name)["cells"]}


def test_a_plan_steps_edits_under_review_wait_in_their_cells_and_land_one_by_one(lab: Lab) -> None:
    lab.shutdown_kernels()
    plans = lab.root / ".opencode" / "plans"
    plans.mkdir(parents=True, exist_ok=True)
    (plans / f"{SLUG}.md").write_text(PLAN)
    name = "plan_review.ipynb"
    ids = write(lab, name, [SETUP, FIRST, SECOND, STEP])
    edits: list[dict[str, Any]] = [
        {"name": "notebook_edit", "input": {"action": "replace", "cell_id": ids[i], "source": labelled(src)}}
        for i, src in ((1, FIRST), (2, SECOND))]
    configure(lab, [{"text": "Labelling both sums.", "tool_calls": edits},
                    {"text": "Proposed a label for each sum."}], review="cells")
    lab.open_notebook(name)
    for index in (0, 1, 2):
        run(lab, index)
    before = saved(lab, name)

    run(lab, 3)
    lab.wait_output(3, "Proposed a label for each sum.", timeout=120)
    first, second = (lab.cell(i).locator(".ocnb-pending") for i in (1, 2))
    first.wait_for(timeout=60_000)
    second.wait_for(timeout=60_000)
    assert first.locator(".ocnb-diff-added").all_inner_texts() == ["+print('a =', a)"]
    assert second.locator(".ocnb-diff-added").all_inner_texts() == ["+print('b =', b)"]
    assert [source(lab, i) for i in (1, 2)] == [FIRST, SECOND], "proposed, not made"
    now = saved(lab, name)
    assert [now[i] for i in ids[1:3]] == [before[i] for i in ids[1:3]], "the file holds the cells as they were"
    assert "ocnb-pending" not in json.dumps(now), "the panels are never saved"

    first.get_by_role("button", name="Accept", exact=True).click()
    lab.cell(1).locator(".ocnb-decided").wait_for(timeout=60_000)
    lab.wait_output(1, "a = 3", timeout=60)
    second.get_by_role("button", name="Reject", exact=True).click()
    lab.cell(2).locator(".ocnb-decided").wait_for(timeout=60_000)
    assert lab.notebook.locator(".ocnb-pending").count() == 0
    after = saved(lab, name)
    assert json.loads(after[ids[1]])["source"] == labelled(FIRST), "the accepted edit landed"
    assert after[ids[2]] == before[ids[2]], "the rejected one left its cell byte for byte as it was"
    assert after[ids[0]] == before[ids[0]]

    # The accepted edit is part of the step's run: that card's Undo takes it back.
    undo = lab.cell(3).locator(".ocnb-undo-button")
    undo.wait_for(timeout=60_000)
    assert "1 cell edited" in lab.cell(3).locator(".ocnb-undo").inner_text()
    undo.click()
    lab.cell(3).locator(".ocnb-undone").wait_for(timeout=60_000)
    assert [source(lab, i) for i in (1, 2)] == [FIRST, SECOND]
    assert lab.page.evaluate(f"() => {NOTEBOOK_JS}.model.cells.length") == 4
