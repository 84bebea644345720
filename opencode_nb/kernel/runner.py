"""Running prompts from notebook cells: which session, which mode, and what the cell shows.

One `NotebookAgent` lives in a kernel. It owns the notebook's workspace (built on a worker thread when the
extension loads, so `%load_ext` returns at once), the notebook's current session, and the runs in
flight. Prompts to one session run one after another: a second prompt to a busy session waits its turn,
and its view says so. Each run happens in a task of its own on the kernel's loop:

- attached: the cell awaits the task, so it stays busy until the agent is done; an interrupt (■) cancels
  the cell, and we then stop the agent and wait for it to wind down before the cell ends. A run that was
  stopped (■, its Stop button, `%agent stop`) fails its cell with one short line (`AgentStopped`), so Run
  All and nbclient stop there as they do after an interrupt;
- detached (`--bg`): the cell returns at once and the view keeps updating; there is no cell to fail.

Each run is a `PromptRun` (`prompt_run.py`), which owns what its cell shows: the live view, the transcript
that replaces it when the run ends, the journal turn the run is, and its cell after a page reload. This
module keeps the wiring: the workspace, the sessions, the queue per session, and stopping.
The cell a prompt came from is read when the prompt starts, from the request JupyterLab sent (`cellId`)
and the source the kernel received, so inserted cells can go right below it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .activity import CellActivity
from .card_undo import CardUndo
from .cell_now import calling_cell_id, cell_count, delivers_to_awaiting_cells
from .fix.failures import FailureLog
from .magics.settings import Agent
from .notebook.frontend import Frontend
from .notebook.journal import Journal
from .notebook.pending import PendingChanges
from .notebook.pending_page import PendingPage
from .person_tools import PersonTools
from .presence import Presence
from .prompt_run import PromptRun
from .stopped import AgentStopped

if TYPE_CHECKING:
    from ..config.schema import Config
    from ..session.models import Part
    from ..views.hub import ViewHub
    from ..workspace import Workspace
    from .notebook.cells import NotebookCells

log = logging.getLogger(__name__)

STOP_GRACE_S = 5.0
"""How long an interrupted cell waits for the agent to wind down (tools are cancelled, text saved)."""


class NotebookAgent:
    def __init__(self, shell: Any, settings: Agent, presence: Presence, *, frontend: Frontend | None = None,
                 activity: CellActivity | None = None) -> None:
        self.shell = shell
        self.settings = settings
        self.presence = presence
        self.frontend = frontend if frontend is not None else Frontend(on_hello=presence.greeted)
        """The `opencode_nb` comm to the JupyterLab extension."""
        self.activity = activity if activity is not None else CellActivity()
        """Which cell the kernel executes now."""
        self.journal = Journal()
        """What each turn did, for `%agent undo` and the Undo of a finished run's card."""
        self.loop: asyncio.AbstractEventLoop | None = None
        """The kernel's loop, known once a prompt ran."""
        self.finishing: set[asyncio.Future[Any]] = set()
        """Subcommands still waiting on the front end; the `%agent` line awaits them before it ends."""
        self.session_id: str | None = None
        """The notebook's current session: consecutive prompts continue it."""
        self.runs: list[PromptRun] = []
        self.background: set[asyncio.Future[Any]] = set()
        """Prompts started by the magic where no await was possible, kept until they finish."""
        self._hub: ViewHub | None = None
        self._locks: dict[str, asyncio.Lock] = {}
        self._workspace: concurrent.futures.Future[Workspace] | None = None
        self._workspace_lock = threading.Lock()
        self._imported = threading.Event()
        """Set once the first build has imported what the magics use (see `start_workspace`)."""
        self.defaults_said = False
        """Whether this kernel said which notebook defaults are in force (`defaults_notice`): once per kernel."""
        self._unwire: Callable[[], None] | None = None
        """Undoes the terminal's printing and asking (terminal IPython only)."""
        self.gate: Callable[[], None] = lambda: None
        """Raises while no agent run may start (`reconfig.ConfigWatch.refuse_prompt`, set by the magics: a mistake
        in a restriction stands). Every run passes it, whatever started it: `prompt` asks it first."""
        self.failures = FailureLog()
        """Every cell that raised in this kernel, for `%agent fix` and `%agent explain` (`fix/failures.py`)."""
        self.person_tools = PersonTools(shell, settled=self.imports_settled)
        """The person's functions offered as tools (`@tool`, `%agent tool add`), given to each workspace built."""
        settings.observe(lambda change: self.reset_workspace(), "directory")
        self.frontend.on_page(self._page_connected)
        CardUndo(self.journal, self._built_notebook, lambda: self.loop, self._built).attach(self.frontend)
        self.pending = PendingChanges(notebook=self._built_notebook, journal=self.journal, presence=presence,
                                      config=self._built_config, root_of=self._root_of)
        """The cell changes agents proposed for the person to accept or reject (`review: cells`, a Fix)."""
        PendingPage(self.pending, self.frontend, lambda: self.loop,
                    lambda: ws.approvers if (ws := self._built()) is not None else None).attach()

    # ------------------------------------------------------------------------------------------ workspace

    @property
    def notebook_path(self) -> str | None:
        """The notebook's path: JupyterLab's hello, else what jupyter_server told the kernel."""
        return self.frontend.path or os.environ.get("JPY_SESSION_NAME") or None

    @property
    def notebook(self) -> NotebookCells:
        """The notebook's cells (as `ws.notebook`), waiting for the workspace if it is still being built."""
        cells = self.workspace().notebook
        assert cells is not None, "the kernel's workspace always has its notebook"
        return cells  # type: ignore[return-value]

    def _built_notebook(self) -> NotebookCells | None:
        """The notebook's cells if the workspace is built; never waits for it."""
        ws = self._built()
        return None if ws is None else ws.notebook  # type: ignore[return-value]

    def _built_config(self) -> Config | None:
        ws = self._built()
        return None if ws is None else ws.config

    def _root_of(self, session_id: str) -> str:
        ws = self._built()
        return session_id if ws is None else ws.sessions.root_of(session_id)

    def _cell_of(self, root_id: str) -> str | None:
        """The cell the latest run of a session tree came from."""
        return next((run.cell_id for run in reversed(self.runs) if run.session_id == root_id), None)

    def _built(self) -> Workspace | None:
        """The workspace if it is built; never waits for it."""
        future = self._workspace
        if future is None or not future.done() or future.exception() is not None:
            return None
        return future.result()

    @property
    def directory(self) -> Path:
        if self.settings.directory:
            return Path(self.settings.directory).expanduser()
        path = os.environ.get("JPY_SESSION_NAME")
        if path and Path(path).is_absolute() and Path(path).parent.is_dir():
            return Path(path).parent
        return Path.cwd()

    def start_workspace(self) -> None:
        """Build the workspace on a worker thread: importing and validating takes about half a second."""
        with self._workspace_lock:
            if self._workspace is not None:
                return
            future: concurrent.futures.Future[Workspace] = concurrent.futures.Future()
            self._workspace = future
        directory = self.directory

        def build() -> None:
            try:
                from .imports import import_parts

                import_parts()
            except BaseException as exc:  # the build below raises it again, where it is reported
                log.debug("importing the workspace's parts failed: %s", exc)
            finally:
                self._imported.set()
            try:
                future.set_result(self._build(directory))
            except BaseException as exc:
                future.set_exception(exc)

        threading.Thread(target=build, name="opencode-nb-workspace", daemon=True).start()

    def start_building(self) -> concurrent.futures.Future[Workspace]:
        """The build of the workspace, started if need be: to wait on without reporting its failure, which the
        next `workspace()` call does (and then builds again)."""
        self.start_workspace()
        future = self._workspace
        if future is None:  # a failed build forgotten meanwhile
            self.start_workspace()
            future = self._workspace
        assert future is not None
        return future

    def imports_settled(self) -> None:
        """Wait until the build thread has imported what the magics use (`imports.py` says why): a package
        half made by one thread fails another thread's import of it."""
        if self._workspace is not None:
            self._imported.wait()

    def _build(self, directory: Path) -> Workspace:
        from ..workspace import Workspace
        from .bridge import IPythonBridge
        from .notebook.cells import NotebookCells

        ws = Workspace(directory, notebook_defaults=True)  # file edits and shell commands ask: NOTEBOOK_RULES
        ws.permissions.policy = self.presence.permission
        ws.questions.policy = self.presence.question
        bridge = IPythonBridge(self.shell, lambda: self.notebook_path, journal=self.journal)
        ws.kernel = bridge
        self.person_tools.attach(ws)
        ws.review = self.pending
        ws.notebook = NotebookCells(shell=self.shell, frontend=self.frontend, mode=lambda: self.presence.mode,
                                    activity=self.activity, journal=self.journal, runner=bridge.live,
                                    root_of=ws.sessions.root_of)
        from .notebook.records import TurnRecords, bound_by

        self.journal.keep_in(TurnRecords(ws.store, str(ws.root), lambda: self.notebook_path,
                                         names_of=bound_by(bridge.live)))
        if ws.hooks is not None:  # `AskWaiting` names the cell the waiting run came from
            ws.hooks.cell_of = lambda session_id: self._cell_of(ws.sessions.root_of(session_id))
        if self.presence.mode == "terminal":
            from .magics.terminal import wire

            self._unwire = wire(ws)
        return ws

    def defaults_notice(self) -> str | None:
        """The line the first `%agent` cell of a kernel starts with while the notebook's defaults are in force
        (file edits and shell commands ask first), saying how to turn them off; None after it was said, when
        the configuration decides both, or before a workspace could be built (a later cell says it then)."""
        if self.defaults_said:
            return None
        ws = self._built()
        if ws is None:
            return None
        self.defaults_said = True
        from ..agent.builtin import notebook_notice

        return notebook_notice(ws.agents.notebook_defaults_in_force())

    def workspace(self) -> Workspace:
        """The workspace, waiting for it if it is still being built.

        Raises:
            ConfigError: a config file is wrong; the next call reads the files again, so fixing the file
                and running the cell again is enough.
        """
        self.start_workspace()
        future = self._workspace
        assert future is not None
        try:
            return future.result()
        except BaseException:
            self._forget_failed(future)
            raise

    async def aworkspace(self) -> Workspace:
        self.start_workspace()
        future = self._workspace
        assert future is not None
        try:
            # Shielded: a cell interrupted while the workspace is built must not cancel the build for every
            # cell after it (cancelling a wrapped future cancels the future it wraps).
            return await asyncio.shield(asyncio.wrap_future(future))
        except Exception:
            self._forget_failed(future)
            raise

    def _forget_failed(self, future: concurrent.futures.Future[Workspace]) -> None:
        with self._workspace_lock:
            if self._workspace is future:
                self._workspace = None

    def reset_workspace(self) -> None:
        """Build the workspace anew (the directory changed, or the config files did)."""
        if self.busy:
            from IPython.core.error import UsageError

            raise UsageError("Agents are still running in this notebook; stop them first (%agent stop), "
                             "then change the directory or reload the configuration.")
        with self._workspace_lock:
            old, self._workspace = self._workspace, None
        if self._hub is not None:
            self._hub.close()
            self._hub = None
        if self._unwire is not None:
            self._unwire()
            self._unwire = None
        self.session_id = None
        if old is not None and old.done() and old.exception() is None:
            old.result().close()

    @property
    def busy(self) -> bool:
        """Whether a run of this notebook has not ended yet."""
        return any(not run.done.is_set() for run in self.runs)

    @property
    def hub(self) -> ViewHub:
        if self._hub is None:
            from ..views.hub import ViewHub

            self._hub = ViewHub(self.workspace().bus)
            self._hub.person = self.frontend.person_now  # whose page a click came from
        return self._hub

    # ------------------------------------------------------------------------------------------ sessions

    def new_session(self, ws: Workspace) -> str:
        session = ws.sessions.create(str(ws.directory), notebook=self.notebook_path or "")
        self.session_id = session.id
        return session.id

    def choose_session(self, ws: Workspace, *, session: str | None, new: bool) -> str:
        if new:
            return self.new_session(ws)
        if session:
            found = ws.sessions.get(session)  # NotFoundError names the id
            self.session_id = found.id
            return found.id
        if self.session_id is None:
            return self.new_session(ws)
        return self.session_id

    # ------------------------------------------------------------------------------------------ running

    async def prompt(self, text: str, *, agent: str | None = None, model: str | None = None,
                     session: str | None = None, new: bool = False, background: bool = False,
                     parts: Sequence[Part] = (), cell_id: str | None = None,
                     show: Callable[[list[dict[str, Any]]], None] | None = None,
                     options: Mapping[str, Any] | None = None) -> Any:
        """Run a prompt from the executing cell; with `cell_id` and `show`, on behalf of that other cell, which
        `show` fills with the run's outputs (through the extension) while the executing cell awaits the run.
        `options`: further keywords of `ws.prompt` for this run only (a Fix or Explain run's `permission` and
        `list_variables`).

        Returns None once an awaited run has ended; the run itself, at once, when the cell does not await it."""
        self.frontend.prefer_sender()  # the page of the person who ran this cell shows what the run asks of it
        ws = await self.aworkspace()
        self.gate()
        session_id = self.choose_session(ws, session=session, new=new)
        parts = [*parts, *self._decisions_told(session_id)]
        # Headless runners shut the kernel down after the last cell: never detach there.
        attached = not ((background or self.detached) and self.presence.mode != "headless")
        run = PromptRun(session_id, cell_id=cell_id or calling_cell_id(self.shell) or None, attached=attached,
                  execution_count=cell_count(self.shell), page=self.frontend.pages, loop=asyncio.get_running_loop(),
                  show=show)
        self.loop = run.loop
        if self.activity.running is not None and cell_id is None:
            run.cell_source = self.activity.running.source
            run.cell_id = run.cell_id or self.activity.running.cell_id
        run.task = asyncio.ensure_future(run.execute(self, ws, text, agent=agent or self.settings.agent,
                                                     model=model or self.settings.model, parts=parts,
                                                     options=options or {}))
        self.runs.append(run)
        run.task.add_done_callback(lambda _: self._forget(run))
        if not attached:
            return run
        try:
            error = await asyncio.shield(run.task)
        except asyncio.CancelledError:
            # The cell was interrupted (■ / Ctrl-C): stop the agent, let it save and render, then say so.
            self.stop(run)
            try:
                await asyncio.wait_for(asyncio.shield(run.task), STOP_GRACE_S)
            except (TimeoutError, asyncio.CancelledError):
                run.task.cancel()
            raise AgentStopped() from None
        if error is not None:
            # The transcript above shows the details; the cell fails so Run All and nbclient stop here.
            raise error
        return None

    def _decisions_told(self, session_id: str) -> list[Part]:
        """The person's decisions on the session's proposed cell changes since its last prompt, as a note the
        model reads with this one."""
        note = self.pending.told(session_id)
        if note is None:
            return []
        from ..session.models import TextPart

        return [TextPart(session_id=session_id, message_id="", text=note, synthetic=True)]

    @property
    def detached(self) -> bool:
        if self.settings.mode != "auto":
            return self.settings.mode == "detached"
        return not delivers_to_awaiting_cells()

    def _forget(self, run: PromptRun) -> None:
        run.done.set()
        if run in self.runs:
            self.runs.remove(run)

    # ------------------------------------------------------------------------------------------ reloads

    def _page_connected(self) -> None:
        """A page connected anew (on the comm's thread): give it the cells of the runs in flight."""
        for run in list(self.runs):
            if run.loop is not None and not run.loop.is_closed():
                run.loop.call_soon_threadsafe(run.relink, self.frontend)

    def stop(self, run: PromptRun | None = None) -> int:
        """Stop one run, or every run of this notebook; returns how many were stopped."""
        runs = [run] if run is not None else list(self.runs)
        count = 0
        for item in runs:
            if item.done.is_set():
                continue
            item.stop_requested = True
            count += 1
            if item.started:
                self.workspace().abort(item.session_id)
            elif item.task is not None:
                item.task.cancel()
        return count

    def lock(self, session_id: str) -> asyncio.Lock:
        return self._locks.setdefault(session_id, asyncio.Lock())

    @property
    def probe_timeout_s(self) -> float:
        return self.settings.probe_timeout_s

    def later(self, bundle: Any, show: Callable[[dict[str, str]], None]) -> None:
        """Show a subcommand's output once it is ready: it waits on the front end, which needs the loop free.

        The task keeps the cell's context, so its output lands in the cell that asked; a top-level `%agent`
        line awaits it (`settle`) before the cell ends.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            show(asyncio.run(_awaited(bundle)))  # terminal IPython between cells: no loop runs
            return

        async def finish() -> None:
            from .magics import listing

            try:
                shown = await bundle
            except Exception as exc:  # nobody may await this task: say what went wrong where it was asked
                shown = listing.text(f"%agent: {exc}")
            show(shown)

        task = asyncio.ensure_future(finish())
        self.finishing.add(task)
        task.add_done_callback(self.finishing.discard)

    async def settle(self) -> None:
        """Wait for the subcommands still finishing, so their output lands before the cell ends."""
        while self.finishing:
            await asyncio.gather(*list(self.finishing))

    async def aclose(self) -> None:
        self.stop()
        for run in list(self.runs):
            if run.task is not None:
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(run.task), STOP_GRACE_S)
        if self._hub is not None:
            self._hub.close()
        if self._workspace is not None and self._workspace.done() and self._workspace.exception() is None:
            await self._workspace.result().aclose()


async def _awaited(awaitable: Any) -> Any:
    return await awaitable

