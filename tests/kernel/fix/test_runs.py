"""`%agent explain` and `%agent fix` in a real kernel, the model served by the real anthropic SDK from a loopback
server: what goes over the wire is the failing cell's context (its traceback, the variables it reads, the
package version for an import error) and nothing about a big frame it does not use; Explain changes nothing;
Fix's proposal waits for the person as a pending change."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from tests.provider.wire_anthropic import anthropic_stream
from tests.provider.wire_server import WireServer

from ..cells_support import printed
from ..frontend import FakeExtension

pytestmark = pytest.mark.timeout(150)

SETUP = ("import numpy as np\nimport pandas as pd\n"
         "sales = pd.DataFrame({'amount': [12.5, 30.0, 7.25], 'city': ['Oslo', 'Rome', 'Lima']})")
HUGE = "huge_unused_frame = pd.DataFrame(np.ones((2_000_000, 8)))"
"""Run where no cell of the notebook shows it (a cell since deleted, the console): its name can come only from
a description or a listing of the namespace, which a Fix or Explain must not give."""
FAILING = "total = sales['revenue'].sum()"
CHANGED = ("edit", "write", "bash", "notebook_edit", "notebook_run")


def start(kernel: Any, server: WireServer, cells: list[str]) -> tuple[Any, FakeExtension]:
    """A kernel whose configuration allows everything: what Explain may not do, its own rules take away."""
    ext = FakeExtension(cells)
    fe = kernel([], permission={"*": "allow"}, render_views=False, extension=ext,
                env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, extra={
                    "small_model": "scripted/title", "model": "anthropic/claude-sonnet-4-6",
                    "provider": {"scripted": {"script": []},
                                 "anthropic": {"base_url": server.url, "api_key": "sk-test"}}})
    fe.wait_for(lambda: fe.extension_comms, what="the kernel's comm")
    return fe, ext


def fails(fe: Any, cell_id: str) -> None:
    """Run the cell, which raises; then wait until the kernel takes requests again (after an error, ipykernel
    aborts the requests that reach it before it has finished aborting its queue)."""
    assert fe.execute_cell(cell_id)["status"] == "error"
    fe.wait_for(lambda: fe.run("pass")["content"]["status"] == "ok", what="the kernel to take requests again")


def namespace(fe: Any) -> str:
    """The person's names and the identity of each value: what a change to the namespace would show."""
    return printed(fe, "print(sorted((k, id(v)) for k, v in globals().items() if not k.startswith('_') "
                       "and k not in ('In', 'Out', 'exit', 'quit', 'get_ipython')))")


def test_explain_sends_the_traceback_and_the_read_variables_and_changes_nothing(kernel: Any):
    with WireServer() as server:
        fe, ext = start(kernel, server, [SETUP, FAILING, "%agent explain c1"])
        assert fe.execute_cell("c0")["status"] == "ok"
        printed(fe, HUGE)
        fails(fe, "c1")
        before, names = json.dumps(ext.nb.cells[:2]), namespace(fe)
        server.queue(anthropic_stream({"text": "**What went wrong**: `sales` has no column `revenue`.\n\n"
                                               "**What to try**: `sales['amount'].sum()`."}))
        msg_id = fe.execute_cell_async("c2")
        assert fe.done(msg_id)["content"]["status"] == "ok"
        [request] = [r for r in server.received if r.path.endswith("/messages")]
        sent = json.dumps(request.body)
        assert "Explain cell [c1] (In [" in sent and "KeyError: 'revenue'" in sent
        assert "Traceback (most recent call last):" in sent and "pandas/core/indexes/base.py" in sent
        assert "total = sales['revenue'].sum()" in sent
        assert "sales: pandas DataFrame, 3 rows \\u00d7 2 columns" in sent and "Oslo" in sent
        assert "(bound last by cell [c0] (In [" in sent
        assert "huge_unused_frame" not in sent, "a frame the cell does not read is neither described nor named"
        assert "The variables are not listed here; the variables tool lists them." in sent
        offered = {tool["name"] for tool in request.body["tools"]}
        assert not offered & set(CHANGED) and {"notebook_read", "variables", "task"} <= offered
        assert "What went wrong" in fe.text(msg_id), "the answer is the card's"
        assert json.dumps(ext.nb.cells[:2]) == before and namespace(fe) == names


def test_explain_of_an_import_error_says_the_installed_version(kernel: Any):
    with WireServer() as server:
        fe, _ = start(kernel, server, ["from pydantic import NoSuchThingHere", "%agent explain"])
        fails(fe, "c0")
        server.queue(anthropic_stream({"text": "That name is not in pydantic 2."}))
        assert fe.execute_cell("c1")["status"] == "ok"
        sent = json.dumps(server.received[-1].body)
        assert f"pydantic {version('pydantic')} is installed" in sent
        assert "ImportError: cannot import name 'NoSuchThingHere' from 'pydantic'" in sent


def test_fix_sends_the_context_and_its_replacement_waits_for_the_person(kernel: Any):
    with WireServer() as server:
        fe, ext = start(kernel, server, [SETUP, FAILING, "%agent fix"])
        assert fe.execute_cell("c0")["status"] == "ok"
        printed(fe, HUGE)
        fails(fe, "c1")
        server.queue(
            anthropic_stream({"tool": "notebook_edit", "id": "toolu_1", "json": json.dumps(
                {"action": "replace", "cell_id": "c1", "source": "total = sales['amount'].sum()"})}, stop="tool_use"),
            anthropic_stream({"text": "The frame has `amount`, not `revenue`; the change sums that column."}))
        assert fe.execute_cell("c2")["status"] == "ok"
        first, second = [r for r in server.received if r.path.endswith("/messages")]
        sent = json.dumps(first.body)
        assert "Fix cell [c1] (In [" in sent and "Traceback (most recent call last):" in sent
        assert "sales: pandas DataFrame" in sent and "huge_unused_frame" not in sent
        assert "notebook_edit" in {tool["name"] for tool in first.body["tools"]}
        result = next(b for m in second.body["messages"] for b in m["content"]
                      if isinstance(b, dict) and b.get("type") == "tool_result")
        assert "Proposed change 1 to cell c1" in json.dumps(result)
        assert ext.source("c1") == FAILING, "a Fix proposes: the cell is unchanged until the person accepts"
        assert printed(fe, "%agent pending").startswith("Change 1: replace cell [c1]")
        assert printed(fe, "%agent accept 1") == ("Accepted change 1: replaced the source of cell [c1]; it ran "
                                                  "without an error.")
        assert ext.source("c1") == "total = sales['amount'].sum()" and printed(fe, "print(total)") == "49.75"


def test_fix_with_nothing_failed_says_what_to_do_and_sends_nothing(kernel: Any):
    with WireServer() as server:
        fe, _ = start(kernel, server, ["x = 1", "%agent fix", "%agent explain c0"])
        assert fe.execute_cell("c0")["status"] == "ok"
        run = fe.execute_cell("c1")
        assert run["status"] == "error"
        assert "No cell has raised an error in this kernel" in json.dumps(run["outputs"])
        fe.wait_for(lambda: fe.run("pass")["content"]["status"] == "ok", what="the kernel to take requests again")
        run = fe.execute_cell("c2")
        assert run["status"] == "error" and "Cell c0 has not raised an error" in json.dumps(run["outputs"])
        assert server.received == []


def test_headless_without_cell_ids_the_failing_cell_is_found_in_the_notebook_file_by_its_text(kernel: Any,
                                                                                              tmp_path: Path):
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in (SETUP, FAILING, "%agent explain")]
    with WireServer() as server:
        fe = kernel([], permission={"*": "allow"}, render_views=False, files={"a.ipynb": nbformat.writes(notebook)},
                    env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "OPENCODE_NB_HEADLESS": "1",
                         "OPENCODE_NB_NOTEBOOK": "a.ipynb"},
                    extra={"small_model": "scripted/title", "model": "anthropic/claude-sonnet-4-6",
                           "provider": {"scripted": {"script": []},
                                        "anthropic": {"base_url": server.url, "api_key": "sk-test"}}})
        assert fe.run(SETUP)["content"]["status"] == "ok"
        assert fe.run(FAILING)["content"]["status"] == "error"
        fe.wait_for(lambda: fe.run("pass")["content"]["status"] == "ok", what="the kernel to take requests again")
        server.queue(anthropic_stream({"text": "No column revenue."}))
        saved = (tmp_path / "project" / "a.ipynb").read_bytes()
        assert fe.run("%agent explain")["content"]["status"] == "ok"
        assert (tmp_path / "project" / "a.ipynb").read_bytes() == saved, "Explain leaves the notebook file as it was"
        sent = json.dumps(server.received[-1].body)
        assert "Explain In [" in sent and "KeyError: 'revenue'" in sent
        assert "The failing cell is #2 of 3." in sent and "sales: pandas DataFrame" in sent


def test_explain_holds_when_the_model_tries_to_change_the_notebook_and_the_namespace(kernel: Any):
    """The model is the attacker: its explanation's turn binds a name and empties `sales` in python, and asks
    notebook_edit (not offered to it) to replace the cell. With every rule of the config allowing everything,
    the cell and the person's namespace are as they were."""
    attack = "sales.drop(sales.index, inplace=True)\nexplained = 1\nprint(len(sales))"
    with WireServer() as server:
        fe, ext = start(kernel, server, [SETUP, FAILING, "%agent explain c1"])
        assert fe.execute_cell("c0")["status"] == "ok"
        fails(fe, "c1")
        before, names = json.dumps(ext.nb.cells[:2]), namespace(fe)
        server.queue(
            anthropic_stream({"tool": "python", "id": "toolu_1", "json": json.dumps(
                {"code": attack, "description": "empty the frame"})}, stop="tool_use"),
            anthropic_stream({"tool": "notebook_edit", "id": "toolu_2", "json": json.dumps(
                {"action": "replace", "cell_id": "c1", "source": "total = 0"})}, stop="tool_use"),
            anthropic_stream({"text": "Done."}))
        assert fe.execute_cell("c2")["status"] == "ok"
        assert json.dumps(ext.nb.cells[:2]) == before, "no cell changed"
        assert namespace(fe) == names and printed(fe, "print(len(sales), 'explained' in dir())") == "3 False"
