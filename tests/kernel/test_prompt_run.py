"""A prompt run's cell after a page reload: the page that connected later is handed the run's outputs, the page
that ran it is not (it already gets them through its own execute request)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from opencode_nb.kernel.notebook.frontend import Frontend
from opencode_nb.kernel.prompt_run import PromptRun
from opencode_nb.kernel.stopped import AgentStopped

LIVE = {"output_type": "display_data", "metadata": {}, "data": {"text/plain": "working"}}
TRANSCRIPT = {"text/html": "<p>done</p>", "text/plain": "done"}


class Comm:
    """Stands in for the extension's comm: counts pages and keeps what was sent."""

    def __init__(self, pages: int) -> None:
        self.pages = pages
        self.sent: list[dict[str, Any]] = []

    capabilities = frozenset({"replace_cell"})

    def send(self, kind: str, **fields: Any) -> None:
        self.sent.append({"kind": kind, **fields})

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.sent.append({"kind": kind, **fields})
        return {"ok": True}


def as_frontend(comm: Comm) -> Frontend:
    return cast(Frontend, comm)  # a run uses only `pages`, `capabilities`, `send` and `request` of its front end


def running(page: int, **fields: Any) -> PromptRun:
    return PromptRun("ses_1", cell_id="cell-1", page=page, execution_count=7, live_output=LIVE, **fields)


def test_the_page_that_ran_the_cell_is_sent_nothing() -> None:
    comm = Comm(pages=1)
    run = running(page=1)

    run.relink(as_frontend(comm))
    run.hand_over(as_frontend(comm), TRANSCRIPT, None)

    assert comm.sent == []


def test_a_reloaded_page_gets_the_live_view_then_the_transcript_and_how_the_cell_failed() -> None:
    comm = Comm(pages=2)
    run = running(page=1)

    async def reloaded_then_ended() -> None:
        run.relink(as_frontend(comm))
        run.hand_over(as_frontend(comm), TRANSCRIPT, AgentStopped())  # before the live view's reply came
        assert run.relinking is not None
        await run.relinking
        await asyncio.sleep(0)  # the transcript follows the live view, never overtakes it

    asyncio.run(reloaded_then_ended())

    live, final = comm.sent
    assert live == {"kind": "replace_cell", "cell_id": "cell-1", "trusted": True, "outputs": [LIVE]}
    assert final["outputs"][0]["data"] == TRANSCRIPT
    assert final["outputs"][1] == AgentStopped().output()
    assert final["execution_count"] == 7, "the cell keeps the count it ran with"


def test_a_finished_run_is_not_relinked() -> None:
    comm = Comm(pages=2)
    run = running(page=1)
    run.done.set()

    run.relink(as_frontend(comm))

    assert comm.sent == []


def test_a_run_shown_by_another_cell_goes_through_its_show_reload_or_not() -> None:
    comm = Comm(pages=1)
    shown: list[list[dict[str, Any]]] = []
    run = running(page=1, show=shown.append)

    run.relink(as_frontend(comm))
    run.hand_over(as_frontend(comm), TRANSCRIPT, None)

    assert comm.sent == []
    assert shown[0] == [LIVE]
    assert shown[1][0]["data"] == TRANSCRIPT
