"""In a kernel, a tool's context carries the live kernel: the person's namespace, its language, its notebook."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(90)

PEEK_TOOL = '''
from pydantic import BaseModel
from opencode_nb.tool.base import Tool, ToolResult
import opencode_nb.kernel as k

class PeekParams(BaseModel):
    name: str

class PeekTool(Tool[PeekParams]):
    id = "peek"
    params = PeekParams
    description = "Read a variable of the notebook."

    async def execute(self, params, ctx):
        value = ctx.kernel.user_ns[params.name]
        return ToolResult(params.name, f"{params.name}={value!r} language={ctx.kernel.language} "
                                       f"notebook={ctx.kernel.notebook_path}")

k.current().workspace().tools.register(PeekTool())
'''


def test_a_tool_sees_the_persons_namespace_through_its_context(kernel):
    fe = kernel([{"tool_calls": [{"name": "peek", "input": {"name": "rows"}}]}, {"text": "Seen."}],
                permission={"*": "allow"}, render_views=False, env={"OPENCODE_NB_HEADLESS": "1"},
                hello={"hello": "JupyterLab", "path": "/work/analysis.ipynb"})
    assert fe.run("rows = [3, 1, 2]")["content"]["status"] == "ok"
    assert fe.run(PEEK_TOOL)["content"]["status"] == "ok"
    assert fe.run("%agent peek at rows")["content"]["status"] == "ok"
    check = fe.execute("ws = k.current().workspace()\n"
                       "[part] = [p for m in ws.sessions.messages(k.current().session_id) for p in m.parts "
                       "if p.type == 'tool']\nprint(part.state.output)")
    fe.done(check)
    assert "rows=[3, 1, 2] language=python notebook=/work/analysis.ipynb" in fe.text(check)


def test_outside_a_kernel_the_context_has_no_kernel(tmp_path):
    from opencode_nb import Workspace

    with Workspace(tmp_path, env={}, data_dir=tmp_path / "data") as ws:
        assert ws.kernel is None and ws.deps.kernel is None


def test_mentions_in_an_agent_cell_complete_to_subagents_files_and_variables(kernel):
    fe = kernel([], render_views=False, files={"sales.csv": "a,b\n1,2\n"})
    fe.run("sales_df = [1, 2]\nsales_total = 3")

    def complete(code: str) -> list[str]:
        msg_id = fe.kc.complete(code, len(code))
        return fe.reply(msg_id)["content"]["matches"]

    assert set(complete("%%agent\nlook at @sal")) >= {"sales_df", "sales_total", "sales.csv"}
    assert "explore" in complete("%%agent\nask @exp")
    assert "data-explorer" in complete("%agent ask @dat")
    assert "explore" not in complete("# ask @exp"), "only agent cells complete mentions"
