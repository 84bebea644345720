"""Through the real loop: the request after an agent's edit carries ruff's finding to the model (over the
wire, with the real SDK); a formatter's result is what the card's diff shows, and undo restores the file as it
was before the edit."""

from __future__ import annotations

import asyncio
import json

from opencode_nb.diagnostics import Diagnostics
from opencode_nb.tool.edit import EditTool
from opencode_nb.tool.notebook_edit import NotebookEditTool
from opencode_nb.tool.write import WriteTool
from tests.checkpoint.conftest import digest, open_workspace, write
from tests.provider.wire import anthropic_stream
from tests.session.conftest import on_wire
from tests.tool.memory_notebook import MemoryNotebook

from .kernel import Kernel


def with_diagnostics(ws) -> Diagnostics:
    """The workspace's file tools, made with the diagnostics its configuration says."""
    diagnostics = Diagnostics(ws.config.diagnostics, ws.config.formatter)
    for tool in (WriteTool(diagnostics), EditTool(diagnostics), NotebookEditTool(diagnostics)):
        ws.tools.register(tool)
    return diagnostics


async def test_the_next_request_carries_the_finding_to_the_model(make, wire):
    h = on_wire(make, wire, "anthropic", permission={"*": "allow"})
    with_diagnostics(h.ws)
    content = "def total(rows):\n    return sum(row.price for row in rowz)\n"
    wire.queue(anthropic_stream({"tool": "write", "id": "toolu_1",
                                 "json": json.dumps({"path": "totals.py", "content": content})}, stop="tool_use"),
               anthropic_stream({"text": "I will fix the typo."}))
    final = await asyncio.wait_for(h.prompt("Write totals.py"), 30)
    assert final.error is None
    second = next(r.body["messages"] for r in wire.received if len(r.body.get("messages", [])) > 1)
    result = next(b for m in second for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
    text = result["content"][0]["text"] if isinstance(result["content"], list) else result["content"]
    assert "Problems found in totals.py after this edit, please fix:\nERROR [2:37] F821 Undefined name `rowz`" in text
    [part] = h.tool_parts()
    assert part.state.metadata["diagnostics"]["count"] == 1


async def test_a_formatted_write_shows_the_formatted_diff_and_undo_restores_the_original(project, tmp_path):
    (project / "src" / "old.py").write_text("y=2\n")
    config = {"formatter": {"ruff": {"command": ["ruff", "format", "$FILE"], "extensions": [".py"]}}}
    ws, _ = open_workspace(project, tmp_path / "data", [write("src/old.py", "y=3\n"), {"text": "Done."}], config)
    with_diagnostics(ws)
    session = ws.sessions.create()
    before = digest(project)
    await asyncio.wait_for(ws.prompt(session.id, "change y"), 30)
    assert (project / "src" / "old.py").read_text() == "y = 3\n"
    [part] = [p for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool"]
    assert part.state.metadata["formatted"] == {"ran": ["ruff"], "notes": []}
    assert "+y = 3" in part.state.metadata["diff"] and "+y=3" not in part.state.metadata["diff"]
    assert "The file was then formatted (ruff), which changed its text: read it again" in part.state.output
    await ws.undo(session.id)
    assert digest(project) == before and (project / "src" / "old.py").read_text() == "y=2\n"
    ws.close()


async def test_without_a_formatter_configured_the_file_is_written_as_given(project, tmp_path):
    ws, _ = open_workspace(project, tmp_path / "data", [write("src/new.py", "y=3\n"), {"text": "Done."}])
    with_diagnostics(ws)
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "add y"), 30)
    assert (project / "src" / "new.py").read_text() == "y=3\n"
    ws.close()


async def test_over_the_wire_a_cell_using_a_live_variable_is_told_only_of_the_missing_name(make, wire):
    h = on_wire(make, wire, "anthropic", permission={"*": "allow"})
    with_diagnostics(h.ws)
    h.ws.notebook = MemoryNotebook(["import pandas as pd", "%%agent\nsummarise sales"], calling="cell-1")
    h.ws.kernel = Kernel({"sales": object(), "pd": object()})
    source = "%matplotlib inline\nsales.groupby('region').sum()\nprint(regoins)\n"
    wire.queue(anthropic_stream({"tool": "notebook_edit", "id": "toolu_1",
                                 "json": json.dumps({"action": "insert", "source": source})}, stop="tool_use"),
               anthropic_stream({"text": "I will fix the name."}))
    final = await asyncio.wait_for(h.prompt("Summarise sales by region"), 30)
    assert final.error is None
    second = next(r.body["messages"] for r in wire.received if len(r.body.get("messages", [])) > 1)
    result = next(b for m in second for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
    text = result["content"][0]["text"] if isinstance(result["content"], list) else result["content"]
    assert text.endswith("Problems found in cell cell-2 after this edit, please fix:\n"
                         "ERROR [3:7] F821 Undefined name `regoins`")
    assert "sales" not in text.partition("Problems found")[2]
