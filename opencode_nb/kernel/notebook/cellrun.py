"""A cell run in the kernel by the agent, written down as the cell's nbformat outputs.

While the agent's own cell executes, cells the front end runs would wait behind it, so the agent runs a
cell's source itself (`LiveRunner`: IPython semantics, its bindings undoable) and puts what it produced
into the cell. The outputs say what happened and no more: no execution count, since the notebook's
counter did not move, and one stdout stream, in which stderr is interleaved as it was written.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from ...values import Cell, CellRun, CodeError, CodeRun
from ..python.live import LiveRunner
from .journal import Journal, LiveRun

if TYPE_CHECKING:
    from .stores import CellStore

AGENT_MAGICS = ("%%agent", "%agent")


async def run_in_kernel(store: CellStore, cells: list[Cell], runner: LiveRunner, journal: Journal, *,
                        timeout_s: float, on_output: Callable[[str], None]) -> list[CellRun]:
    """Run code cells in order until one fails or the time is up; the rest are `aborted`.

    Each cell's outputs replace its old ones in the notebook; its bindings are recorded for undo.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    results: list[CellRun] = []
    stopped = False
    for cell in cells:
        if stopped or deadline - loop.time() <= 0:
            stopped = True
            results.append(CellRun(id=cell.id, status="aborted"))
            continue
        if cell.cell_type != "code":
            results.append(CellRun(id=cell.id, status="ok"))  # nothing to execute; the front end renders it
            continue
        run = await runner.run(cell.source, timeout_s=deadline - loop.time(), on_output=on_output)
        if run.run_id is not None:
            journal.record(LiveRun(run.run_id))
        status: Literal["ok", "error", "aborted"] = "ok"
        if run.error is not None:
            stopped = True
            status = "error"
            if loop.time() >= deadline:  # cut short by the call's timeout, not failed
                status = "aborted"
                run = run.model_copy(update={"error": CodeError(
                    ename="TimeoutError", evalue=f"stopped when the {timeout_s:g} s given to run the cells ran out",
                    traceback="The agent's run of this cell was stopped at its timeout; it did not finish.")})
        outputs = outputs_of(run)
        await store.replace(cell.id, outputs=outputs, execution_count=None)
        results.append(CellRun(id=cell.id, status=status, outputs=outputs))
    return results


def outputs_of(run: CodeRun) -> list[dict[str, Any]]:
    outputs: list[dict[str, Any]] = []
    if run.output:
        outputs.append({"output_type": "stream", "name": "stdout", "text": run.output})
    for bundle in run.displays:
        outputs.append({"output_type": "display_data", "data": _data(bundle), "metadata": {}})
    if run.result is not None:
        outputs.append({"output_type": "execute_result", "data": _data(run.result), "metadata": {},
                        "execution_count": None})
    if run.error is not None:
        outputs.append({"output_type": "error", "ename": run.error.ename, "evalue": run.error.evalue,
                        "traceback": run.error.traceback.splitlines()})
    return outputs


def stream_text(outputs: list[dict[str, Any]]) -> str:
    """The text a cell's outputs printed, for the tool card while the front end runs cells."""
    return "".join(str(o.get("text", "")) for o in outputs if o.get("output_type") == "stream")


def is_agent_prompt(source: str) -> bool:
    """The cell is a prompt to an agent: running it here would start an agent inside the agent."""
    first = next((line.strip() for line in source.splitlines() if line.strip()), "")
    return first.split(" ")[0] in AGENT_MAGICS


def _data(bundle: dict[str, Any]) -> dict[str, Any]:
    """Mime data as nbformat holds it: binary images as base64 text."""
    return {mime: base64.b64encode(value).decode() if isinstance(value, bytes) else value
            for mime, value in bundle.items()}
