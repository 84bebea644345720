"""Value types that more than one part of the package passes around: tools make them, sessions store them.

They live below both `tool/` and `session/`, so a tool never has to import the session package to describe
what it returns, and the import graph keeps flowing one way (see DESIGN.md, "Data flow").
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Stored and published values are never changed in place: a change is a new value (`model_copy`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Attachment(Frozen):
    """A file a tool returns or a person attaches, carried as a `data:` or `file:` URL."""

    mime: str
    url: str
    filename: str | None = None


class Todo(Frozen):
    """One item of a session's todo list, which `todowrite` replaces whole."""

    content: str
    status: Literal["pending", "in_progress", "completed", "cancelled"] = "pending"
    priority: Literal["high", "medium", "low"] = "medium"
    id: str = ""


NOT_CONFINED = "NotConfined"
"""The error name of a sandboxed run that did not run because the OS sandbox it required was not there."""


class CodeError(Frozen):
    """An exception the model's code raised, as the model reads it."""

    ename: str
    evalue: str
    traceback: str
    """Trimmed to the frames that help: the model's own lines, and the last library frames."""


class NamespaceChanges(Frozen):
    """What a run of code did to the names of the namespace it ran in."""

    created: list[str] = []
    rebound: list[str] = []
    deleted: list[str] = []
    mutated: list[str] = []
    """Existing objects the code may have changed in place (`df["x"] = ...`, `.append(...)`, `inplace=True`):
    such changes are not undone."""


class CodeRun(Frozen):
    """What running a piece of the model's Python gave back, wherever it ran."""

    mode: Literal["live", "fork", "worker"]
    """live: in the person's namespace; fork: a copy-on-write fork of the kernel; worker: a spawned process
    that received copies of the variables the code names."""
    output: str = ""
    """stdout and stderr as they were written, interleaved."""
    displays: list[dict[str, Any]] = []
    """Rich outputs (`display()`, figures), as mime bundles: text/plain, text/html, image/png (base64)."""
    result: dict[str, Any] | None = None
    """The mime bundle of the last expression's value, when the code ended with an expression."""
    error: CodeError | None = None
    changes: NamespaceChanges = NamespaceChanges()
    run_id: str | None = None
    """A live run's id, for undoing what it bound."""
    notes: list[str] = []
    """Why the run went where it did (a gate refused the fork), and what was cut."""
    confinement: str | None = None
    """How the OS confined a sandboxed run, as its supervisor learnt before the code ran ("confined by the OS
    (…)", or "isolated at the Python level only"); None for a live run."""
    duration_s: float = 0.0


# ----------------------------------------------------------------------------------------------- notebook

CellType = Literal["code", "markdown", "raw"]


class Cell(Frozen):
    """One cell of the notebook as the agents see it: the live model (unsaved edits included) when the
    JupyterLab extension answers, else the file on disk."""

    id: str
    cell_type: CellType
    source: str
    metadata: dict[str, Any] = {}
    execution_count: int | None = None
    outputs: list[dict[str, Any]] = []
    """nbformat outputs (stream, display_data, execute_result, error); large data may arrive summarised."""
    running: bool = False
    """The cell is executing now (the calling `%%agent` cell, or one queued by the person)."""


class NewCell(Frozen):
    """A cell an agent asks to insert."""

    cell_type: CellType = "code"
    source: str = ""
    metadata: dict[str, Any] = {}


class NotebookSnapshot(Frozen):
    """What `read` returns: the cells asked for, and where the reading came from."""

    path: str | None = None
    """The notebook's path relative to the server root (live) or the file read (on disk); None if unknown."""
    source: Literal["live", "file"]
    cells: list[Cell]
    total: int
    """How many cells the notebook has (`cells` may hold only those asked for)."""
    active_cell: str | None = None
    running_cell: str | None = None


class CellRun(Frozen):
    """How one cell's execution ended."""

    id: str
    status: Literal["ok", "error", "aborted"]
    """aborted: not run, or cut short, because an earlier cell failed, the run was stopped or timed out."""
    execution_count: int | None = None
    outputs: list[dict[str, Any]] = []
    """nbformat outputs, images as base64 `image/png` data."""
