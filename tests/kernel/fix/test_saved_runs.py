"""`%agent explain` and `%agent fix` on an error a fresh kernel never saw: the notebook was run and saved by another
kernel, so the only record of the failure is the cell's saved error output. The request the real anthropic SDK
sends to a loopback server carries that output's traceback and says where it comes from."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

from opencode_nb.kernel.fix.saved import LAST_NOTE
from tests.provider.wire_anthropic import anthropic_stream
from tests.provider.wire_server import WireServer

from ..cells_support import printed
from ..frontend import FakeExtension
from .test_saved import error_output

pytestmark = pytest.mark.timeout(150)

SETUP = "import pandas as pd\nsales = pd.DataFrame({'amount': [12.5, 30.0], 'city': ['Oslo', 'Rome']})"
FAILING = "total = sales['revenue'].sum()"
SAVED_NOTE = "from the cell's saved output: this kernel did not see the cell fail"
NOW_NOTE = "may differ from what they were when the cell failed"


@pytest.fixture(scope="module")
def ran(ipython: Any) -> nbformat.NotebookNode:
    """The notebook as another kernel left it: run top to bottom, its second cell's KeyError saved under it."""
    ipython.run_cell(SETUP)
    try:
        error = error_output(ipython, FAILING)
    finally:
        ipython.user_ns.pop("sales", None)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SETUP, id="load1", execution_count=1),
                nbformat.v4.new_code_cell(FAILING, id="fail2", execution_count=2, outputs=[error])]
    assert error["ename"] == "KeyError"
    return nb


def config(server: WireServer) -> dict[str, Any]:
    return {"small_model": "scripted/title", "model": "anthropic/claude-sonnet-4-6",
            "provider": {"scripted": {"script": []}, "anthropic": {"base_url": server.url, "api_key": "sk-test"}}}


def test_explain_of_a_cell_saved_with_its_error_sends_the_saved_traceback(kernel: Any, tmp_path: Path,
                                                                          ran: nbformat.NotebookNode):
    error = ran.cells[1].outputs[0]
    error_line = [line for line in error.traceback if "KeyError" in line][-1]
    assert "\x1b[" in error_line, "the saved traceback is coloured, as ipykernel sends it"
    with WireServer() as server:
        fe = kernel([], permission={"*": "allow"}, render_views=False, files={"a.ipynb": nbformat.writes(ran)},
                    env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "OPENCODE_NB_NOTEBOOK": "a.ipynb"},
                    extra=config(server))
        server.queue(anthropic_stream({"text": "**What went wrong**: `sales` has no column `revenue`."}))
        saved = (tmp_path / "project" / "a.ipynb").read_bytes()
        reply = fe.run("%agent explain fail2")
        assert reply["content"]["status"] == "ok", fe.text(reply["parent_header"]["msg_id"])
        assert (tmp_path / "project" / "a.ipynb").read_bytes() == saved
        [request] = [r for r in server.received if r.path.endswith("/messages")]
        sent = json.dumps(request.body)
        assert "Explain cell [fail2] (In [2]): KeyError: 'revenue'" in sent
        assert SAVED_NOTE in sent and NOW_NOTE in sent
        assert "KeyError: 'revenue'" in sent and "\\u001b[" not in sent, "the saved error line, without colours"
        assert re.search(r"Cell In\[\d+\], line 1", sent) and "----> 1 total = sales['revenue'].sum()" in sent
        assert "pandas/core/indexes/base.py" in sent, "the saved frames, as text"
        assert "Read but not defined in the namespace now: sales" in sent, "a fresh kernel: nothing to describe"
        assert "The failing cell is #2 of 2." in sent


def test_fix_alone_on_a_fresh_kernel_takes_the_notebooks_last_error_cell_and_proposes(kernel: Any,
                                                                                    ran: nbformat.NotebookNode):
    cells: list[str | dict[str, Any]] = [
        {"id": c.id, "source": c.source, "outputs": c.outputs, "execution_count": c.execution_count}
        for c in ran.cells]
    ext = FakeExtension([*cells, "%agent fix"])
    with WireServer() as server:
        fe = kernel([], permission={"*": "allow"}, render_views=False, extension=ext,
                    env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, extra=config(server))
        fe.wait_for(lambda: fe.extension_comms, what="the kernel's comm")
        assert fe.execute_cell("load1")["status"] == "ok"  # the frame exists now: it is described as it is
        server.queue(
            anthropic_stream({"tool": "notebook_edit", "id": "toolu_1", "json": json.dumps(
                {"action": "replace", "cell_id": "fail2", "source": "total = sales['amount'].sum()"})},
                stop="tool_use"),
            anthropic_stream({"text": "The frame has `amount`, not `revenue`."}))
        assert fe.execute_cell("c2")["status"] == "ok"
        first = next(r for r in server.received if r.path.endswith("/messages"))
        sent = json.dumps(first.body)
        assert "Fix cell [fail2] (In [2]): KeyError: 'revenue'" in sent and LAST_NOTE in sent and SAVED_NOTE in sent
        assert "sales: pandas DataFrame, 2 rows \\u00d7 2 columns" in sent and NOW_NOTE in sent
        assert ext.source("fail2") == FAILING, "a Fix proposes: nothing changes before the person accepts"
        assert printed(fe, "%agent pending").startswith("Change 1: replace cell [fail2]")
