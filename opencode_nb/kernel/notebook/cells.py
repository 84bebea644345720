"""The notebook's cells as the agents see them (`ctx.notebook`, `ws.notebook`): the kernel's `NotebookAccess`.

Where the cells come from:
- live: the JupyterLab extension said hello, so every read and change is a request on the comm and shows
  at once, unsaved edits included;
- file: no extension answers (nbclient, VS Code, classic Notebook), so the notebook file is read. It is
  written only where no front end holds the notebook: a headless run, or terminal IPython. A front end
  that has the notebook open keeps its own copy and saves it over the file (the running cell alone makes
  that copy differ from the file), and the kernel cannot tell what it holds, so there a change is refused
  and says what to do instead; only one code cell can still go below the running cell, through IPython's
  `set_next_input`.

Running cells: the notebook runs them itself (`run_cells`) only when no cell of the kernel is executing.
While one is (the common case: the agent's own `%%agent` cell awaits the agent), cells sent to the front
end would queue behind it and never run before the agent gives up, so the agent runs each cell's source
in the kernel (`LiveRunner`) and writes the outputs into the cell.

Every change is recorded in the journal's current turn; `undo` takes a turn back.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from ...tool.context import NotebookRefused
from ...values import Cell, CellRun, NewCell, NotebookSnapshot
from ..activity import CellActivity
from ..python.live import LiveRunner
from . import nbfile
from .cellrun import is_agent_prompt, run_in_kernel, stream_text
from .filecells import FileCells
from .frontend import Frontend, FrontendError
from .journal import TURN, Deleted, Inserted, Journal, Replaced, Turn
from .livecells import LiveCells
from .stores import CellStore
from .undo import Agree, redo_turn, undo_turn

NEXT_INPUT = ("(no id yet: IPython's set_next_input puts this code cell below the running cell when that cell "
              "finishes; until then it cannot be read, run or undone)")
"""What `insert` returns for the cell it handed to `set_next_input`, in place of an id."""



class NotebookCells:
    def __init__(self, *, shell: Any, frontend: Frontend, mode: Callable[[], str], activity: CellActivity,
                 journal: Journal, runner: LiveRunner, root_of: Callable[[str], str]) -> None:
        """
        Args:
            mode: the presence mode now (`interactive`, `headless`, `terminal`, `unknown`).
            root_of: the root of a session's tree (`SessionService.root_of`).
        """
        self.shell = shell
        self.frontend = frontend
        self.mode = mode
        self.activity = activity
        self.journal = journal
        self.runner = runner
        self.root_of = root_of
        self._live = LiveCells(frontend)
        self._file: FileCells | None = None
        self._next_input_for: object | None = None
        """The running cell `set_next_input` was used for: only one cell per execution."""

    # ------------------------------------------------------------------------------------------ where

    @property
    def live(self) -> bool:
        """The extension answers: reads see the live model, changes show at once."""
        return self.frontend.live

    @property
    def path(self) -> str | None:
        """The notebook's path: server-relative from the extension, else the file that would be read."""
        if self.live:
            return self.frontend.path
        file = self._file_path()
        return str(file) if file else None

    @property
    def notes(self) -> list[str]:
        """What a reader of the file should know (cell ids it had to be given)."""
        return list(self._file.notes) if self._file is not None else []

    def _file_path(self) -> Path | None:
        return nbfile.notebook_file(self.shell.user_ns, os.environ, Path.cwd())

    def _store(self) -> CellStore:
        if self.live:
            return self._live
        path = self._file_path()
        if path is None:
            raise NotebookRefused(
                "No notebook is known to this kernel: the opencode_nb JupyterLab extension is not connected, and "
                "neither the Jupyter server, VS Code nor OPENCODE_NB_NOTEBOOK names the notebook file. Set "
                "OPENCODE_NB_NOTEBOOK to its path (for nbclient or nbconvert runs), or open the notebook in "
                "JupyterLab with the extension enabled.")
        if self._file is None or self._file.path != path:
            self._file = FileCells(path)
        return self._file

    def _writable(self) -> CellStore:
        store = self._store()
        if isinstance(store, FileCells):
            refusal = self._file_refusal()
            if refusal is not None:
                raise NotebookRefused(refusal)
        return store

    def _file_refusal(self) -> str | None:
        """Why the file must not be written now, or None where no front end holds the notebook.

        Headless means nobody answered in time, which a front end that draws no widgets can look like too;
        so a kernel that VS Code or a Jupyter server started for a notebook never writes it.
        """
        vs_code = "__vsc_ipynb_file__" in self.shell.user_ns
        if self.mode() in ("headless", "terminal") and not vs_code and not os.environ.get("JPY_SESSION_NAME"):
            return None
        who = "VS Code" if vs_code else "a front end"
        return (f"The notebook is open in {who} without the opencode_nb JupyterLab extension. That front end keeps "
                "its own copy of the notebook and saves it over the file, and the kernel cannot see what it "
                "holds unsaved, so a change written to the file now would be lost or would destroy the person's "
                "edits. Nothing was changed. Show the person the code or the change to make instead; to let "
                "agents change cells, open the notebook in JupyterLab with the opencode_nb extension enabled "
                "(it ships with the opencode-nb package; `jupyter labextension list` shows it) and reload the page.")

    # ------------------------------------------------------------------------------------------ the calling cell

    def calling_cell(self, session_id: str) -> str | None:
        try:
            root = self.root_of(session_id)
        except Exception:  # an unknown session: no cell
            root = session_id
        turn = self.journal.origin(root)
        if turn is None:
            current = TURN.get()
            turn = current if current is not None and current.session_id == root else None
        if turn is None:
            return None
        if turn.cell_id:
            return turn.cell_id
        if turn.cell_source and not self.live and self._file_path() is not None:
            store = self._store()  # nbclient sends no cell ids: find the cell by its text
            if isinstance(store, FileCells):
                return store.find(turn.cell_source)
        return None

    def _running_cell(self) -> str | None:
        running = self.activity.running
        if running is None:
            return None
        if running.cell_id:
            return running.cell_id
        return self._file.find(running.source) if self._file is not None else None

    # ------------------------------------------------------------------------------------------ reading

    async def read(self, cell_ids: list[str] | None = None, *, max_output_chars: int | None = None) -> NotebookSnapshot:
        """`max_output_chars`: of each output's text (default: the store's own bound)."""
        store = self._store()
        if isinstance(store, FileCells):
            return await store.read(cell_ids, max_output_chars=max_output_chars, running_cell=self._running_cell())
        return await store.read(cell_ids, max_output_chars=max_output_chars)

    async def active_cell(self) -> str | None:
        """The cell the person has selected (live only; the file knows no selection)."""
        return await self._live.active_cell() if self.live else None

    # ------------------------------------------------------------------------------------------ changing

    async def insert(self, cells: list[NewCell], *, after: str | None, session_id: str) -> list[str]:
        if not cells:
            return []
        store = self._store()
        if isinstance(store, FileCells) and (refusal := self._file_refusal()) is not None:
            return self._next_input(cells, after, session_id, refusal)
        turn = TURN.get()
        target, below_calling = after, False
        if after is None:
            calling = self.calling_cell(session_id)
            if calling is not None:
                below_calling = True
                target = turn.below_calling if turn is not None and turn.below_calling else calling
        payload = [{"cell_type": c.cell_type, "source": c.source, "metadata": c.metadata} for c in cells]
        try:
            ids = await store.insert(payload, target)
        except NotebookRefused:
            if not below_calling or target == self.calling_cell(session_id):
                raise
            ids = await store.insert(payload, self.calling_cell(session_id))  # the previous insert is gone
        for cell_id, cell in zip(ids, cells, strict=False):
            self.journal.record(Inserted(cell_id, cell.source))
        if below_calling and turn is not None and ids:
            turn.below_calling = ids[-1]
        return ids

    def _next_input(self, cells: list[NewCell], after: str | None, session_id: str, refusal: str) -> list[str]:
        running = self.activity.running
        why_not = None
        if len(cells) != 1 or cells[0].cell_type != "code":
            why_not = "it adds one code cell, no more and no markdown"
        elif running is None:
            why_not = "it adds a cell below the running cell, and no cell is running"
        elif after is not None and after != self.calling_cell(session_id):
            why_not = "it adds a cell only below the running cell"
        elif self._next_input_for is running:
            why_not = "it adds one cell per run of a cell, and this run already added one"
        if why_not is not None:
            raise NotebookRefused(f"{refusal} (IPython's set_next_input cannot help here: {why_not}.)")
        self.shell.set_next_input(cells[0].source, replace=False)
        self._next_input_for = running
        return [NEXT_INPUT]

    async def replace(self, cell_id: str, *, source: str, cell_type: str | None, session_id: str) -> Cell:
        store = self._writable()
        fields: dict[str, Any] = {"source": source}
        if cell_type:
            fields["cell_type"] = cell_type
        previous = await store.replace(cell_id, **fields)
        self.journal.record(Replaced(cell_id, previous.source, previous.cell_type, source,
                                     cell_type or previous.cell_type))
        return previous

    async def delete(self, cell_ids: list[str], *, session_id: str) -> list[Cell]:
        store = self._writable()
        calling = self.calling_cell(session_id)
        if calling is not None and calling in cell_ids:
            raise NotebookRefused(f"Cell {calling} is the cell this agent is running in; it cannot be deleted "
                                  "while it runs. Nothing was deleted.")
        deleted = await store.delete(cell_ids)
        for cell, index in deleted:
            self.journal.record(Deleted(cell.model_dump(), index))
        return [cell for cell, _ in deleted]

    # ------------------------------------------------------------------------------------------ running

    async def run(self, cell_ids: list[str], *, timeout_s: float, session_id: str,
                  on_output: Callable[[str], None]) -> list[CellRun]:
        in_notebook = self.live and not self.activity.busy and "run_cells" in self.frontend.capabilities
        store = self._live if in_notebook else self._writable()
        snapshot = await store.read(cell_ids, max_output_chars=0)
        calling = self.calling_cell(session_id)
        for cell in snapshot.cells:
            if cell.id == calling or cell.running:
                raise NotebookRefused(f"Cell {cell.id} is running now (the cell this agent runs in, or one the "
                                      "person started); it cannot be run again until it ends. Nothing was run.")
            if cell.cell_type == "code" and is_agent_prompt(cell.source):
                # Run here it would start an agent inside this one; run by the notebook it would wait for this
                # run to release its session, while this run waits for it.
                raise NotebookRefused(f"Cell {cell.id} is a prompt to an agent (%%agent); an agent cannot run it. "
                                      "Nothing was run; the person can run it when this agent is done.")
        if in_notebook:
            return await self._run_in_notebook(cell_ids, timeout_s=timeout_s, on_output=on_output)
        return await run_in_kernel(store, snapshot.cells, self.runner, self.journal, timeout_s=timeout_s,
                                   on_output=on_output)

    async def _run_in_notebook(self, cell_ids: list[str], *, timeout_s: float,
                               on_output: Callable[[str], None]) -> list[CellRun]:
        def cell_done(event: dict[str, Any]) -> None:
            text = stream_text((event.get("result") or {}).get("outputs") or [])
            if text:
                on_output(text)

        results = await self._live.run(cell_ids, timeout_s=timeout_s, on_event=cell_done)
        return [CellRun(id=str(r.get("id")), status=_status(r.get("status")), execution_count=r.get("execution_count"),
                        outputs=list(r.get("outputs") or [])) for r in results]

    def schedule_run(self, cell_ids: list[str], *, checkpoint: bool = True) -> None:
        """Ask the notebook to run cells after the current cell ends, saving after each; returns at once.

        For a cell that is about to end (`%agent plan run`): the front end queues the cells behind it and runs
        them one by one, as if the person pressed Shift+Enter on each.

        Raises:
            NotebookRefused: the extension is not connected, or cannot run cells.
        """
        try:
            self.frontend.send("run_cells", cell_ids=cell_ids, stop_on_error=True, checkpoint=checkpoint)
        except FrontendError as exc:
            raise NotebookRefused(str(exc)) from None

    # ------------------------------------------------------------------------------------------ undoing

    async def undo(self, run_id: str | None = None) -> str:
        """Take back the latest turn (cells and bindings), or one live python run's bindings."""
        if run_id is not None:
            return self.runner.undo(run_id)
        turn = self.journal.latest()
        if turn is None:
            return self.runner.undo()  # bindings made outside any turn, or nothing at all
        return await self.take_back(turn)

    async def take_back(self, turn: Turn, *, agree: Agree | None = None) -> str:
        """Undo `turn`, the latest or any other (its run's card); returns what was done. `agree`: asks about the
        names the person rebound since (none: they are kept)."""
        self.journal.remove(turn)
        store, why_not = self.store_or_why()
        return await undo_turn(turn, store, self.runner, why_not=why_not, agree=agree)

    async def put_back(self, turn: Turn, *, agree: Agree | None = None) -> str:
        """Redo what the latest undo of `turn` took; the turn is kept again, so it can be undone again."""
        store, why_not = self.store_or_why()
        report = await redo_turn(turn, store, self.runner, why_not=why_not, agree=agree)
        self.journal.put_back(turn)
        return report

    def store_or_why(self) -> tuple[CellStore | None, str | None]:
        try:
            return self._writable(), None
        except NotebookRefused as exc:
            return None, str(exc)


def _status(value: Any) -> Literal["ok", "error", "aborted"]:
    return value if value in ("ok", "error", "aborted") else "error"
