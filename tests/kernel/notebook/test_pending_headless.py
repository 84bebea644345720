"""Headless (nbclient, `OPENCODE_NB_HEADLESS`) nobody can review a proposed cell change later: the unattended
policy decides it at once, on the notebook file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from ..cells_support import printed

pytestmark = pytest.mark.timeout(120)

AGENT_CELL = "%%agent\nfix the cell"


def notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    for i, source in enumerate(sources):
        nb.cells.append(nbformat.v4.new_code_cell(source, id=f"c{i}"))
    nbformat.write(nb, path)
    return path


def edit_results(fe) -> list[dict[str, Any]]:
    text = printed(fe, "import json as _j, opencode_nb.kernel as _k\n_ws = _k.current().workspace()\n"
                       "print(_j.dumps([{'output': p.state.output, 'metadata': p.state.metadata} "
                       "for m in _ws.sessions.messages(_k.current().session_id) for p in m.parts "
                       "if p.type == 'tool' and p.tool == 'notebook_edit' and p.state.status == 'completed']))")
    return json.loads(text.splitlines()[-1])


SCRIPT = [{"tool_calls": [{"name": "notebook_edit", "input": {"action": "replace", "cell_id": "c0",
                                                                 "source": "total = 6 * 7\nprint(total)"}}]},
          {"text": "Fixed."}]


@pytest.mark.parametrize("policy", ["deny", "allow-readonly"])
def test_headless_deny_rejects_the_proposal_and_the_file_keeps_its_bytes(kernel, tmp_path, policy):
    path = notebook(tmp_path / "analysis.ipynb", "total = 6 * '7'", AGENT_CELL)
    before = path.read_bytes()
    fe = kernel(SCRIPT, permission={"*": "allow"}, render_views=False, extra={"review": "cells"},
                env={"OPENCODE_NB_HEADLESS": "1", "OPENCODE_NB_NOTEBOOK": str(path), "OPENCODE_NB_PERMISSION": policy})
    msg_id = fe.execute(AGENT_CELL)
    assert fe.done(msg_id)["content"]["status"] == "ok"
    assert path.read_bytes() == before
    [result] = edit_results(fe)
    assert result["metadata"]["review"] == "rejected"
    assert result["output"] == (f"Change 1 to cell c0 was not applied: nobody is present to review it "
                                f"(Agent.permission = {policy}): nothing changed. Show the person the change "
                                "instead, or leave the cell as it is.")
    assert "nobody is present to review it" in fe.text(msg_id), "the transcript says so"


def test_headless_allow_accepts_the_proposal_and_reruns_the_cell_in_the_file(kernel, tmp_path):
    path = notebook(tmp_path / "analysis.ipynb", "total = 6 * '7'", AGENT_CELL)
    fe = kernel(SCRIPT, permission={"*": "allow"}, render_views=False, extra={"review": "cells"},
                env={"OPENCODE_NB_HEADLESS": "1", "OPENCODE_NB_NOTEBOOK": str(path), "OPENCODE_NB_PERMISSION": "allow"})
    assert fe.run(AGENT_CELL)["content"]["status"] == "ok"
    cell = nbformat.read(path, as_version=4).cells[0]
    assert cell.source == "total = 6 * 7\nprint(total)" and cell.outputs[0]["text"] == "42\n"
    [result] = edit_results(fe)
    assert result["metadata"]["review"] == "accepted"
    assert result["output"] == ("Nobody is present to review it, and Agent.permission = allow accepted it. Accepted "
                                "change 1: replaced the source of cell c0; it ran without an error.")
    assert printed(fe, "%agent undo").startswith("Restored the cell this run edited")
    assert nbformat.read(path, as_version=4).cells[0].source == "total = 6 * '7'"
