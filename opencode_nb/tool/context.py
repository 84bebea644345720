"""What a tool call may use: `ToolContext`, and the shapes of the services it names.

The loop builds one context per call. Everything a tool may reach is a named, typed field, so a misspelt
service is a type error and an attribute error at once, never a `KeyError` deep inside a run; a field a
run cannot supply is None, and the tool says what that means for the model (no subagents here, nobody to
ask, no kernel). Tools never import the loop, the workspace or the Jupyter layer: what they need of them is
described here as a protocol, and the layers above fill it in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..permission.events import Ask, ToolRef
from ..values import Cell, CellRun, CodeRun, NewCell, NotebookSnapshot, Todo

if TYPE_CHECKING:
    from ..config.schema import SandboxMode
    from ..permission.rules import Rule
    from ..question.service import QuestionService
    from ..sandbox.policy import SandboxCall


Update = Callable[[str | None, dict[str, Any] | None], None]
"""`update(title, metadata)`: a new live title (None keeps it) and metadata merged into the running part."""

AgentSwitch = Callable[[str, str], None]
"""`switch_agent(agent, note)`: from the next step on, `agent` answers, told `note` (plan ↔ build)."""

Permitted = Callable[[str, str], str]
"""`permitted(permission, pattern)`: what the calling agent's rules say ("allow", "ask" or "deny") without
asking anybody, for a tool that chooses how to work from what it would be allowed (python: live or sandbox)."""


class SandboxRefused(Exception):
    """Neither a fork nor a worker can run this code safely; `str()` says why, for the model and the person."""


class NotebookRefused(Exception):
    """The notebook cannot be read or changed the way asked; `str()` says why and what to do, for the model."""


class TodoStore(Protocol):
    """The session's todo list; the workspace's store publishes `todo.updated` when it changes."""

    def todos(self, session_id: str) -> list[Todo]: ...

    def set_todos(self, session_id: str, todos: list[Todo]) -> None: ...


class TaskRunner(Protocol):
    """Runs a subagent in a child session and returns (child session id, its final text)."""

    async def run(self, *, parent_id: str, caller: str, description: str, prompt: str, agent: str,
                  task_id: str | None, model: str | None, update: Update | None) -> tuple[str, str]: ...

    async def start_background(self, *, parent_id: str, caller: str, description: str, prompt: str, agent: str,
                               model: str | None = None) -> str:
        """Start the subagent beside the caller; returns the task's id (its child session's) at once."""
        ...

    async def status(self, parent_id: str, task_id: str | None, wait_s: float) -> str:
        """How one background task, or each of the session's, stands (waiting up to `wait_s` for them)."""
        ...

    def cancel(self, parent_id: str, task_id: str) -> str:
        """Stop a background task; what happened, in words for the model."""
        ...


class KernelBridge(Protocol):
    """The person's live kernel, as a tool may see it; the context holds None outside a kernel."""

    @property
    def language(self) -> str:
        """The kernel's language (`python`), for what tools tell the model."""
        ...

    @property
    def notebook_path(self) -> str | None:
        """The notebook the kernel serves, when the front end or the server said so."""
        ...

    @property
    def user_ns(self) -> Mapping[str, Any]:
        """The person's namespace: what their cells defined."""
        ...

    async def run_live(self, code: str, *, timeout_s: float, on_output: Callable[[str], None]) -> CodeRun:
        """Run `code` in the person's namespace; the result says what it bound, and `run_id` undoes that."""
        ...

    async def run_sandboxed(self, code: str, *, timeout_s: float, on_output: Callable[[str], None],
                            sandbox: SandboxMode = "auto") -> CodeRun:
        """Run `code` where nothing of the person's can change: a fork, else a worker, each confined by the OS
        as `sandbox` says (off: Python-level isolation only; required: no run without the OS sandbox).

        Raises:
            SandboxRefused: neither can run it (objects holding connections, no way to isolate).
        """
        ...

    def undo(self, run_id: str | None = None) -> str:
        """Rebind what a live run (the latest by default) rebound or deleted, drop what it created; says what."""
        ...


class NotebookAccess(Protocol):
    """The notebook the kernel serves, as the notebook tools and plans see it; None outside a kernel.

    With the JupyterLab extension answering, reads see the live model (unsaved edits included) and changes
    show at once; without it, the notebook file on disk is read, and written only where no front end holds
    unsaved changes (otherwise `NotebookRefused` says so). Every change is recorded for the run that made it,
    so `%agent undo` can take back what the latest turn did to cells.
    """

    @property
    def live(self) -> bool:
        """The extension answers: the live model is read and changed."""
        ...

    def calling_cell(self, session_id: str) -> str | None:
        """The id of the cell whose run `session_id` (or its root session) belongs to, when known."""
        ...

    async def read(self, cell_ids: list[str] | None = None) -> NotebookSnapshot:
        """Every cell, or those of `cell_ids` (an unknown id raises `NotebookRefused` naming it)."""
        ...

    async def insert(self, cells: list[NewCell], *, after: str | None, session_id: str) -> list[str]:
        """Insert below cell `after`, or below the calling cell when None (else at the end); the new ids."""
        ...

    async def replace(self, cell_id: str, *, source: str, cell_type: str | None, session_id: str) -> Cell:
        """Set a cell's source (and type); returns the cell as it was."""
        ...

    async def delete(self, cell_ids: list[str], *, session_id: str) -> list[Cell]:
        """Delete cells; returns them as they were."""
        ...

    async def run(self, cell_ids: list[str], *, timeout_s: float, session_id: str,
                  on_output: Callable[[str], None]) -> list[CellRun]:
        """Run cells in order, stopping at the first error; each cell's outputs also land in the notebook."""
        ...


@dataclass(frozen=True, kw_only=True)
class CellProposal:
    """A cell change `notebook_edit` proposes instead of making it, when the person reviews each one."""

    action: Literal["insert", "replace", "delete"]
    cell_id: str | None
    """replace and delete: the cell; insert: None (the new cell gets its id when the change is accepted)."""
    after: str | None
    """insert: the cell to insert below, as the call gave it (None: below the calling cell)."""
    cell_type: str
    """The cell's type once the change is applied."""
    old_source: str
    old_type: str | None
    """replace and delete: what the cell was when proposed, to tell a person's later edit (None for insert)."""
    new_source: str
    diff: str
    metadata: dict[str, Any] = field(default_factory=dict)
    """insert: the new cell's metadata (who made it)."""
    session_id: str
    message_id: str
    call_id: str
    agent: str


@dataclass(frozen=True, kw_only=True)
class ProposalOutcome:
    """What became of a proposal at once: `pending` (the person decides later), or decided by the unattended
    policy (`accepted`, `rejected`) where nobody is present."""

    n: int
    state: Literal["pending", "accepted", "rejected"]
    said: str
    """One sentence for a person."""
    told: str
    """What the model reads."""
    decide: list[str] = field(default_factory=list)
    """The lines a person types to decide, for a card where no page shows the change in place."""


class CellReview(Protocol):
    """The person reviews cell changes one by one (`review: cells`, or forced for a run): the kernel keeps them
    as pending changes; None outside a kernel."""

    def reviewing(self, session_id: str, agent: str) -> bool:
        """Whether `agent`'s cell changes in this session land as pending changes."""
        ...

    async def propose(self, proposal: CellProposal) -> ProposalOutcome:
        """Keep the change pending, or decide it at once where nobody is present; never waits for a person."""
        ...

    def pending_cells(self) -> dict[str, int]:
        """Cell id → the number of the pending change to it (replace and delete)."""
        ...


def _no_update(title: str | None, metadata: dict[str, Any] | None) -> None:
    return None


@dataclass(kw_only=True, slots=True)
class ToolContext:
    session_id: str
    message_id: str
    call_id: str
    agent: str
    """The name of the agent making the call."""
    directory: Path
    """Where the person works (a notebook's folder): relative paths and commands start here."""
    data_dir: Path
    """Where truncated outputs are saved (`data_dir/tool-output/`)."""
    ask: Ask
    update: Update = _no_update
    root: Path | None = None
    """The project's root (the git worktree), when it is not `directory`: what lies inside the project, the
    protected files and the paths permission patterns name are judged from it, and leaving it asks first.
    Kept apart from `directory` as OpenCode keeps its worktree apart from the instance's directory."""
    todos: TodoStore | None = None
    """The session's todo list; None where a run keeps none."""
    questions: QuestionService | None = None
    """Where questions to the person go; None when nobody can be asked."""
    tasks: TaskRunner | None = None
    """Runs subagents; None where delegation is not available."""
    switch_agent: AgentSwitch | None = None
    """Hands the session to another agent; None outside a loop run."""
    plan_path: str | None = None
    """Where this session's plan lives, relative to the project root (`.opencode/plans/<slug>.md`)."""
    model: str | None = None
    """The model of the calling step (`provider/model`), which a subagent without its own model inherits."""
    kernel: KernelBridge | None = None
    """The live kernel the workspace runs in; None outside a kernel."""
    permitted: Permitted | None = None
    """The calling agent's rules, read without asking; None where a run has none."""
    notebook: NotebookAccess | None = None
    """The notebook the kernel serves; None outside a kernel."""
    review: CellReview | None = None
    """Where cell changes go when the person reviews each one; None outside a kernel."""
    sandbox: SandboxCall | None = None
    """The OS sandbox shell commands run in (and the caller's `network` rules); None runs them unconfined."""
    rules: Callable[[str], list[Rule]] | None = None
    """`rules(permission)`: the calling agent's rules for a permission in deciding order, its "always" grants
    last; for a check that depends on which rules exist (bash asks about code no rule can see only when some
    rule denies something); None where a run has none."""

    @property
    def tool_ref(self) -> ToolRef:
        """This call, for requests that views show beside it."""
        return ToolRef(message_id=self.message_id, call_id=self.call_id)
