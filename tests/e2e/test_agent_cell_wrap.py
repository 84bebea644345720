"""In JupyterLab, a `%%agent` cell's prompt wraps in its editor like prose, at any width, while code cells keep
the notebook's setting (no wrapping by default); a cell that becomes a prompt, or stops being one, follows."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

import opencode_nb

from .lab import Lab

pytestmark = pytest.mark.e2e

LONG_PROMPT = "%%agent\n" + " ".join(["Summarise the sales data frame by region and explain the outliers"] * 4)
LONG_CODE = "x = " + " + ".join(["1"] * 120)

EDITORS_JS = """() => window.jupyterapp.shell.currentWidget.content.widgets.map(w => {
  const content = w.editor?.host.querySelector('.cm-content');
  const scroller = w.editor?.host.querySelector('.cm-scroller');
  return {wraps: content?.classList.contains('cm-lineWrapping') ?? null,
          overflows: scroller ? scroller.scrollWidth > scroller.clientWidth + 1 : null};
})"""
SET_SOURCE_JS = ("([i, text]) => "
                 "window.jupyterapp.shell.currentWidget.content.widgets[i].model.sharedModel.setSource(text)")


@pytest.fixture(scope="module")
def lab_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The extension as this checkout builds it (`jlpm build` writes it into the package), found before any
    installed copy: JUPYTER_PATH comes first in the labextensions path."""
    shared = tmp_path_factory.mktemp("jupyter-path")
    (shared / "labextensions").mkdir()
    (shared / "labextensions" / "opencode-nb").symlink_to(Path(opencode_nb.__file__).parent / "labextension")
    return {"OPENCODE_NB_DATA_DIR": str(tmp_path_factory.mktemp("ocnb-data")), "JUPYTER_PATH": str(shared)}


def settled(lab: Lab, check: Any, timeout: float = 10.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while not check(state := lab.page.evaluate(EDITORS_JS)):
        if time.monotonic() > deadline:
            raise AssertionError(state)
        time.sleep(0.1)
    return state


@pytest.mark.parametrize("width", [800, 1600])
def test_a_prompt_wraps_in_its_editor_and_code_does_not(lab: Lab, width: int) -> None:
    lab.page.set_viewport_size({"width": width, "height": 900})
    lab.write_notebook(f"wrap-{width}.ipynb", [LONG_PROMPT, LONG_CODE])
    lab.open_notebook(f"wrap-{width}.ipynb")
    state = settled(lab, lambda s: s[0]["wraps"] is True)
    assert state[0]["overflows"] is False, "the prompt's words stay inside the editor"
    assert state[1]["wraps"] is False and state[1]["overflows"] is True, "code keeps the notebook's setting"
    lab.page.evaluate(SET_SOURCE_JS, [1, "%%agent\n" + LONG_CODE])
    settled(lab, lambda s: s[1]["wraps"] is True)
    lab.page.evaluate(SET_SOURCE_JS, [1, LONG_CODE])
    settled(lab, lambda s: s[1]["wraps"] is False)
