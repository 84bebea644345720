"""Self-test of the browser harness: a widget click reaches a busy (awaiting) cell, the output is saved and
survives a kernel shutdown plus a page reload. Also checks that the kernel is this venv's Python and inherits
the environment given to the harness."""

from __future__ import annotations

import sys
import threading
import time
import urllib.error

import pytest

from .lab import Lab

pytestmark = pytest.mark.e2e

MARKER = "ocnb-e2e-marker-1b7f"

WIDGET_CELL = """\
import asyncio
import ipywidgets as widgets
from IPython.display import display

loop = asyncio.get_running_loop()
clicked = loop.create_future()
button = widgets.Button(description="Press me")

def on_click(b):
    b.description = "pressed"
    # the handler may run on another thread (comms over subshells): resolve on the kernel loop
    loop.call_soon_threadsafe(lambda: clicked.done() or clicked.set_result("click"))

button.on_click(on_click)
display(button)
got = await asyncio.wait_for(clicked, 30)
print("done", got)
"""

ENV_CELL = """\
import os, sys
print("exe=" + sys.executable)
print("marker=" + str(os.environ.get("OCNB_E2E_MARKER")))
"""


@pytest.fixture(scope="module")
def lab_env() -> dict[str, str]:
    return {"OCNB_E2E_MARKER": MARKER}


def test_click_while_busy_save_reload(lab: Lab) -> None:
    t0 = time.monotonic()
    lab.write_notebook("harness.ipynb", [WIDGET_CELL, ENV_CELL])
    nb = lab.open_notebook("harness.ipynb")

    # The awaiting cell stays busy until the button is clicked.
    lab.run_cell(0)
    button = nb.locator("button.jupyter-button", has_text="Press me")
    button.wait_for()
    assert lab.prompt(0) == "[*]"
    button.click()
    nb.locator("button.jupyter-button", has_text="pressed").wait_for(timeout=10_000)
    lab.wait_output(0, "done click", timeout=10)
    assert lab.wait_cell_done(0) == "[1]"

    # The kernel is this interpreter and sees the harness environment.
    lab.run_cell(1)
    lab.wait_cell_done(1)
    out = lab.output_text(1)
    assert f"exe={sys.executable}" in out
    assert f"marker={MARKER}" in out

    saved = lab.save()
    assert any("done click" in "".join(o.get("text", "")) for o in saved["cells"][0]["outputs"])

    assert lab.shutdown_kernels() >= 1
    lab.reload()
    lab.wait_output(0, "done click", timeout=10)
    assert lab.prompt(0) == "[1]"
    assert MARKER in lab.output_text(1)
    assert time.monotonic() - t0 < 40, f"harness self-test took {time.monotonic() - t0:.1f}s"


def test_a_notebook_read_while_its_file_is_half_written_waits_for_the_whole_file(lab: Lab) -> None:
    path = lab.write_notebook("halfway.ipynb", ["print('whole')"])
    whole = path.read_text(encoding="utf-8")
    path.write_text(whole[: len(whole) // 2], encoding="utf-8")  # as a save caught in the middle leaves it
    with pytest.raises(urllib.error.HTTPError) as answer:  # what a plain read gets at that moment
        lab.api("GET", "/api/contents/halfway.ipynb?content=1&type=notebook")
    assert answer.value.code == 400

    finish = threading.Timer(0.5, path.write_text, (whole,), {"encoding": "utf-8"})
    finish.start()
    try:
        saved = lab.read_notebook("halfway.ipynb")
    finally:
        finish.join()
    assert "".join(saved["cells"][0]["source"]) == "print('whole')"

    path.write_text(whole[:10], encoding="utf-8")  # a file that never becomes whole is still an error
    with pytest.raises(urllib.error.HTTPError):
        lab.read_notebook("halfway.ipynb", timeout=0.3)
