"""What the notebook-cell tests in a kernel share: a tool that calls `ctx.notebook`, and readers of results.

The `nbop` tool calls one method of the context's notebook with the arguments the scripted model gives,
and returns the result as JSON; so a test drives the kernel's `NotebookAccess` exactly as the notebook
tools do (inside a run, in its turn, from its calling cell) without depending on how they word things.
"""

from __future__ import annotations

import json
from typing import Any

NBOP_TOOL = '''
import opencode_nb.kernel as k
k.current().workspace()  # built on a worker thread: importing the tool modules beside it could race
import json
from pydantic import BaseModel
from opencode_nb.tool.base import Tool, ToolResult
from opencode_nb.tool.context import NotebookRefused
from opencode_nb.values import NewCell

class NbOpParams(BaseModel):
    op: str
    args: dict = {}

class NbOpTool(Tool[NbOpParams]):
    id = "nbop"
    params = NbOpParams
    description = "Call the notebook."

    async def execute(self, params, ctx):
        notebook, args, printed = ctx.notebook, dict(params.args), []
        if "cells" in args:
            args["cells"] = [NewCell(**c) for c in args["cells"]]
        if params.op in ("insert", "replace", "delete", "run"):
            args["session_id"] = ctx.session_id
        if params.op == "run":
            args.setdefault("timeout_s", 20)
            args["on_output"] = printed.append
        try:
            if params.op == "calling_cell":
                result = notebook.calling_cell(ctx.session_id)
            else:
                result = await getattr(notebook, params.op)(**args)
        except NotebookRefused as exc:
            result = {"refused": str(exc)}
        if isinstance(result, list):
            result = [r.model_dump() if hasattr(r, "model_dump") else r for r in result]
        elif hasattr(result, "model_dump"):
            result = result.model_dump()
        return ToolResult(params.op, json.dumps({"result": result, "printed": "".join(printed)}))

k.current().workspace().tools.register(NbOpTool())
'''

SETUP = "import asyncio, json\nimport opencode_nb.kernel as k\nfrom opencode_nb.values import NewCell\n" \
        "agent = k.current()\nnb = agent.notebook\n"


def op(name: str, **args: Any) -> dict[str, Any]:
    """One scripted turn that calls the `nbop` tool."""
    return {"tool_calls": [{"name": "nbop", "input": {"op": name, "args": args}}]}


def printed(fe: Any, code: str, timeout: float = 30.0) -> str:
    """What `code` printed, stripped; fails with the cell's error when it raised."""
    msg_id = fe.execute(code)
    reply = fe.done(msg_id, timeout)
    assert reply["content"]["status"] == "ok", f"{reply['content'].get('ename')}: {reply['content'].get('evalue')}"
    return fe.text(msg_id).strip()


def tool_results(fe: Any) -> list[dict[str, Any]]:
    """The `nbop` results of the notebook's current session, oldest first."""
    text = printed(fe, "import json as _j, opencode_nb.kernel as _k\n_ws = _k.current().workspace()\n"
                       "print(_j.dumps([p.state.output for m in _ws.sessions.messages(_k.current().session_id) "
                       "for p in m.parts if p.type == 'tool' and p.tool == 'nbop' and p.state.status == 'completed']))")
    return [json.loads(o) for o in json.loads(text.splitlines()[-1])]
