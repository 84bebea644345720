"""pyright's language server after edits, where it is installed (pyright or basedpyright on PATH): its type
errors reach the model; the same server answers the next edit of the file; an undefined name both checkers
report is read once."""

from __future__ import annotations

import pytest

from opencode_nb.config.schema import DiagnosticsConfig
from opencode_nb.diagnostics import Diagnostics
from opencode_nb.diagnostics.lsp import find_server
from opencode_nb.tool.edit import EditTool
from opencode_nb.tool.write import WriteTool

pytestmark = pytest.mark.skipif(find_server() is None, reason="neither pyright nor basedpyright is installed")


@pytest.fixture
async def checked():
    # The first check waits for the server to start and read the project: generous here, 5 s by default.
    diagnostics = Diagnostics(DiagnosticsConfig(python=["ruff", "pyright"], timeout_s=45))
    yield diagnostics
    await diagnostics.aclose()


async def test_a_type_error_reaches_the_model_and_the_fix_clears_it(ctx, checked):
    first = await WriteTool(checked).run({"path": "src/count.py", "content": 'count: int = "three"\nprint(cont)\n'},
                                         ctx)
    found = first.metadata["diagnostics"]
    name = (find_server() or ("?",))[0]
    assert found["checkers"] == ["ruff", name], found["notes"]
    assert [(f["line"], f["source"]) for f in found["findings"]] == [(1, name), (2, "ruff")]
    assert "ERROR [1:14] " in first.output and "ERROR [2:7] F821 Undefined name `cont`" in first.output
    [server] = checked._servers.values()
    fixed = await EditTool(checked).run({"path": "src/count.py", "old_string": '"three"', "new_string": "3"}, ctx)
    assert fixed.metadata["diagnostics"]["count"] == 1  # the undefined name is left
    assert list(checked._servers.values()) == [server] and server.alive
