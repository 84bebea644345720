"""The data-exploration notebook runs headless on the built-in scripted model, as CI runs it."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

pytestmark = pytest.mark.timeout(300)


def test_the_data_exploration_notebook_explores_in_a_sandbox_then_cleans_live_and_undoes(tmp_path):
    notebook = nbformat.read(NOTEBOOKS / "data_exploration.ipynb", as_version=4)
    client = NotebookClient(notebook, timeout=240, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE_NB_") and k != "JPY_SESSION_NAME"}
    client.execute(env={**env, "OPENCODE_NB_HEADLESS": "1", "OPENCODE_NB_DATA_DIR": str(tmp_path / "data"),
                        "XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    code = [c for c in notebook.cells if c.cell_type == "code"]

    def text(cell) -> str:
        return "\n".join(str(o.get("text") or o.get("data", {}).get("text/plain", "")) for o in cell.outputs)

    explore = text(code[2])
    assert "@data-explorer" in explore and "copy-on-write fork" in explore and "✓ variables df" in explore
    assert text(code[3]) == "(np.int64(3), ['OK', 'fault', 'ok'])", "the sandbox's fillna never reached df"
    cleaned = text(code[4])
    assert "Ran in the person's namespace (live)." in cleaned and "created: clean" in cleaned
    assert "allowed by policy" in cleaned
    assert text(code[5]) == "(38, 5)"
    assert "Undone: removed clean." in text(code[6])
    assert text(code[7]) == "(False, (42, 5))"
