"""One prompt's run from a notebook cell: what the cell shows while it works, and the transcript it leaves.

`NotebookAgent` (`runner.py`) decides which session a prompt goes to, whether its cell waits, and queues
and stops runs; each run it starts is a `PromptRun`, which owns everything about that one run's cell:

- how it is shown: printed as it happens in terminal IPython, one "working…" line for headless runners,
  else the live view (`live_cell.py`, built once the run lasts long enough to watch);
- the transcript that replaces the live view, in place, when the run ends, naming the run's journal turn
  (`card_undo.RUN_MIME`) so the extension can put an Undo of that very run under it;
- the cell after a page reload. A run's live view, and the transcript that replaces it, travel as messages
  about the cell's execute request, which only the page that sent it routes to the cell: after a reload
  (or the notebook closed and reopened) nobody would show them. So when a page connects anew while runs
  are in flight, each run's cell is handed its live view again through the extension (`relink`), and the
  run's final transcript, and how the cell failed, follows the same way (`hand_over`), where the extension
  saves it. Without the extension the transcript is still in the session: `%agent show` prints it. A run
  shown by another cell (a plan's step run from the cell that approved it) goes through its `show`
  callback instead, reload or not.

Each run is a turn of the journal: the run sets `journal.TURN`, so whatever its tools (and its subagents'
tools) do to cells and bindings is recorded there, and `%agent undo` takes the turn back.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .. import id as ids
from .card_undo import RUN_MIME, run_data
from .ending import cell_error, error_output, status_of, with_error
from .notebook.frontend import Frontend, FrontendError, FrontendTimeout
from .notebook.journal import TURN, Journal, Turn
from .rewind import link

if TYPE_CHECKING:
    from ..errors import OpencodeNbError
    from ..session.models import AssistantMessage, Part
    from ..session.result import PromptResult
    from ..views.hub import ViewHub
    from ..views.records import AskRecorder
    from ..views.session import SessionView
    from ..workspace import Workspace
    from .live_cell import LiveCell
    from .presence import Presence

    Result = AssistantMessage | PromptResult | str | OpencodeNbError | None
    """What a run ended with: the final message, a local command's text (/help), or the error that ended it."""

log = logging.getLogger(__name__)


class RunHost(Protocol):
    """What a run needs of the kernel that started it."""

    presence: Presence
    frontend: Frontend
    journal: Journal

    @property
    def hub(self) -> ViewHub: ...

    @property
    def probe_timeout_s(self) -> float:
        """How long the first run waits to learn whether a front end shows widgets."""
        ...

    def lock(self, session_id: str) -> asyncio.Lock:
        """Held while a run of that session works: prompts to one session run one after another."""
        ...

    def stop(self, run: PromptRun | None = None) -> int: ...


@dataclass
class PromptRun:
    session_id: str
    task: asyncio.Task[Any] | None = None
    started: bool = False
    stop_requested: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)
    cell_id: str | None = None
    """The id of the cell the prompt came from, when the front end sent it (JupyterLab does)."""
    cell_source: str | None = None
    """That cell's text as the kernel received it (how a cell is found in a file when no id came)."""
    attached: bool = True
    """The cell awaits the run, and fails when the run does."""
    execution_count: int | None = None
    """The count of the cell the prompt came from."""
    page: int = 0
    """`Frontend.pages` when the prompt started: a page that connected later never saw the cell run."""
    loop: asyncio.AbstractEventLoop | None = None
    live_output: dict[str, Any] | None = None
    """The live view as a cell output (nbformat), to hand to a page that connected after the run started."""
    show: Callable[[list[dict[str, Any]]], None] | None = None
    """Where the run is shown instead of the executing cell: called with the outputs (nbformat) of the cell
    that shows it, the live view first, the transcript last (a plan's step run from the cell that approved it)."""
    view: LiveCell | None = field(default=None, repr=False)
    """The live view, in a cell that shows one."""
    handle: Any = field(default=None, repr=False)
    """What the transcript is drawn into when the run ends: the live view, the headless line, or nothing."""
    prompt: str = ""
    """The prompt's text: it names the run in a cell re-created for it after a reload (`lost_cell.py`)."""
    workspace: Workspace | None = field(default=None, repr=False)
    """Where the run's asks wait, to name them when its cell is re-created."""
    relinking: asyncio.Task[None] | None = field(default=None, repr=False)
    """The live view on its way to a page that connected anew; the transcript follows it, never overtakes it."""

    # -------------------------------------------------------------------------------------------- running

    async def execute(self, host: RunHost, ws: Workspace, text: str, *, agent: str | None, model: str | None,
                      parts: Sequence[Part] = (), options: Mapping[str, Any] | None = None) -> BaseException | None:
        """Run the prompt and show it in the cell; returns what its cell raises, if the cell awaits it."""
        from ..errors import OpencodeNbError
        from ..views.records import AskRecorder

        self.prompt, self.workspace = text, ws
        self._show_in_cell(host, ws, agent)
        status, floor, started = "done", ids.NOT_STARTED, time.time()
        outcome: Result = None
        recorder = AskRecorder(ws.bus, self.session_id)
        turn = host.journal.begin(self.session_id, cell_id=self.cell_id, cell_source=self.cell_source)
        TURN.set(turn)
        try:
            await host.presence.decide(host.probe_timeout_s)
            lock = host.lock(self.session_id)
            if lock.locked() and self.view is not None:
                self.view.queued()
            async with lock:
                floor = ids.ascending("message")
                started = time.time()
                self.started = True
                if self.view is not None:
                    self.view.floor = floor
                    self.view.start()
                try:
                    outcome = await send(ws, self.session_id, text, agent=agent, model=model, parts=parts,
                                         options=options)
                finally:
                    link(ws, turn, host.journal, floor)  # the turn's files, for its card and %agent undo
                status = status_of(outcome, stop_requested=self.stop_requested)
        except asyncio.CancelledError:
            status = "stopped"
            raise
        except OpencodeNbError as exc:
            status = "error"
            outcome = exc
        finally:
            error = self._end(host, ws, status, outcome, floor, time.time() - started, recorder, turn)
        return error

    def _show_in_cell(self, host: RunHost, ws: Workspace, agent: str | None) -> None:
        """Choose how the cell shows the run while it works, from what shows the kernel's output."""
        from IPython.display import display

        from .live_cell import LiveCell

        mode = host.presence.mode
        if mode == "terminal":
            self.handle = _Silent()  # the session was printed as it happened
        elif mode == "headless":
            self.handle = display({"text/plain": f"@{agent or ws.agents.default.name} is working…"}, raw=True,
                                  display_id=True)
        else:
            from ..views.session import SessionView

            def stop() -> None:
                host.stop(self)

            # The view is built once the run lasts long enough to watch (`live_cell.py`); at once while no front
            # end is known (showing it is how one makes itself known), for a run another cell shows, and for a
            # run that goes on after its cell ended.
            self.view = self.handle = LiveCell(host.hub, self.session_id, lambda: SessionView(
                ws, host.hub, self.session_id, floor=ids.NOT_STARTED, on_stop=stop),
                lambda live: self._shown(host, live),
                at_once=mode == "unknown" or self.show is not None or not self.attached)

    def _shown(self, host: RunHost, live: SessionView) -> dict[str, Any] | None:
        """What shows the live view in this cell; None when another cell shows it."""
        host.presence.watch(live.widget)
        self.live_output = {"output_type": "display_data", "metadata": {}, "data": live.widget._repr_mimebundle_()}
        if self.show is not None:
            self.show([self.live_output])
            return None
        self.relink(host.frontend)  # a page that connected before the view was shown
        return self.live_output["data"]

    def _end(self, host: RunHost, ws: Workspace, status: str, result: Result, floor: str, elapsed: float,
             recorder: AskRecorder, turn: Turn) -> BaseException | None:
        """Put the transcript in the live view's place; returns what the cell raises, if it awaits the run."""
        if self.view is not None:
            self.view.finish(status)
        recorder.close()
        # A cell that fails says why right under the transcript: the transcript does not say it again.
        error = cell_error(status, result) if self.attached else None
        try:
            bundle = self._transcript(ws, status, result, floor, elapsed, recorder, turn, ending=error is None)
            self.handle.update(bundle, raw=True)
            self.hand_over(host.frontend, bundle, error)  # before the view closes: it never shows gone
            if self.view is not None:
                self.view.close()  # the transcript stands in for it now: free its widgets on both sides
        except Exception:
            log.exception("could not render the transcript")
        return error

    def _transcript(self, ws: Workspace, status: str, result: Result, floor: str, elapsed: float,
                    recorder: AskRecorder, turn: Turn, *, ending: bool) -> dict[str, Any]:
        from ..views.transcript import transcript_bundle
        from .magics import listing

        bundle: dict[str, Any]
        if floor != ids.NOT_STARTED:
            bundle = transcript_bundle(ws, self.session_id, since=floor, records=recorder.records, status=status,
                                       elapsed_s=elapsed, ending=ending)
        else:
            bundle = {"text/plain": f"(stopped before it started: {status})"}
        if isinstance(result, Exception) and ending:
            bundle = with_error(bundle, result)
        elif isinstance(result, str):
            bundle = listing.text(result)  # a local command's output (/help)
        if "text/html" in bundle and (undoable := run_data(turn)) is not None:
            bundle = {**bundle, RUN_MIME: undoable}
        return bundle

    # -------------------------------------------------------------------------------------------- reloads

    def moved(self, frontend: Frontend) -> bool:
        """Whether the run's cell is shown by a page other than the one that ran it."""
        return self.cell_id is not None and self.page > 0 and frontend.pages != self.page

    def relink(self, frontend: Frontend) -> None:
        """Show the run's live view in its cell on the page that connected after the run started (on the loop)."""
        if self.done.is_set() or self.live_output is None:
            return
        if self.show is not None:
            self.show([self.live_output])
        elif self.moved(frontend):
            loop = self.loop or asyncio.get_running_loop()  # called on the loop: from `_shown` or `_page_connected`
            self.relinking = loop.create_task(self._relink(frontend, self.live_output))

    async def _relink(self, frontend: Frontend, live: dict[str, Any]) -> None:
        """Hand the live view to the run's cell; a page without that cell (reloaded before the notebook was
        saved) gets a new cell holding it, and a notification naming what the run waits for."""
        try:
            await self._request_cell(frontend, outputs=[live])
            return
        except FrontendTimeout as exc:
            log.info("the reloaded page did not take the run's live view: %s", exc)
            return
        except FrontendError as exc:
            if not await self._cell_missing(frontend):
                log.info("could not hand the run's cell to the reloaded page: %s", exc)
                return
        try:
            await self._recreate(frontend, live)
        except FrontendError as exc:
            log.warning("could not show the run again in the reloaded page: %s", exc)

    async def _cell_missing(self, frontend: Frontend) -> bool:
        """Whether the page's notebook lacks the run's cell (rather than refusing for another reason)."""
        try:
            reply = await frontend.request("read_cells", max_output_chars=0)
        except FrontendError:
            return False
        return self.cell_id not in {cell.get("id") for cell in reply.get("cells") or []}

    async def _recreate(self, frontend: Frontend, live: dict[str, Any]) -> None:
        """A new cell at the end of the notebook shows the run from now on: its live view, then its transcript."""
        from .lost_cell import cell_source, notice, waiting_asks

        reply = await frontend.request("insert_cells", after=None, cells=[
            {"cell_type": "code", "source": cell_source(self.prompt), "metadata": {}}])
        self.cell_id = str(reply["ids"][0])
        await self._request_cell(frontend, outputs=[live])
        asks = waiting_asks(self.workspace, self.session_id) if self.workspace is not None else []
        if "notify" in frontend.capabilities:
            frontend.send("notify", message=notice(self.prompt, asks), cell_id=self.cell_id,
                          kind="warning" if asks else "info")

    def hand_over(self, frontend: Frontend, bundle: dict[str, Any], error: BaseException | None) -> None:
        """Give the run's transcript (and how its cell failed) to the cell that shows it, when that is not the
        executing cell on the page that ran it; called before the live view closes, so it never shows gone."""
        if self.show is None and not self.moved(frontend):
            return
        outputs: list[dict[str, Any]] = [{"output_type": "display_data", "metadata": {}, "data": bundle}]
        if error is not None:
            outputs.append(error_output(error))
        if self.show is not None:
            self.show(outputs)
        elif self.relinking is not None and not self.relinking.done():
            # The cell that will show it may not exist yet (`_recreate`): send the transcript once it does.
            self.relinking.add_done_callback(lambda _: self._send_cell(
                frontend, outputs=outputs, execution_count=self.execution_count))
        else:
            self._send_cell(frontend, outputs=outputs, execution_count=self.execution_count)

    async def _request_cell(self, frontend: Frontend, **fields: Any) -> None:
        # The outputs are the kernel's own, as its execution would have sent them: trusted.
        await frontend.request("replace_cell", cell_id=self.cell_id, trusted=True, **fields)

    def _send_cell(self, frontend: Frontend, **fields: Any) -> None:
        try:
            frontend.send("replace_cell", cell_id=self.cell_id, trusted=True, **fields)
        except FrontendError as exc:  # the new page has no extension: `%agent show` still has the transcript
            log.info("could not hand the run's cell to the reloaded page: %s", exc)


async def send(ws: Workspace, session_id: str, text: str, *, agent: str | None, model: str | None,
               parts: Sequence[Part] = (),
               options: Mapping[str, Any] | None = None) -> AssistantMessage | PromptResult | str | None:
    """A slash command runs as that command; anything else is a prompt to the session (`options`: further
    keywords of `ws.prompt`)."""
    from ..command.runner import parse_slash

    slash = parse_slash(text)
    if slash is not None:
        return await ws.command(session_id, slash[0], slash[1], agent=agent, model=model)
    return await ws.prompt(session_id, text.strip(), agent=agent, model=model, parts=parts, **(options or {}))


class _Silent:
    def update(self, *args: Any, **kwargs: Any) -> None:
        pass
