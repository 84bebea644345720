"""What the agent loop and the command runner are given to work with.

The workspace builds everything once and hands the loop this record, not itself: a session module can
only reach the services listed here, so what the loop depends on is visible in one place, and nothing
under `session/` or `command/` needs to import the workspace (which imports them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..agent.registry import AgentRegistry
from ..bus import Bus
from ..config.load import LoadedConfig
from ..config.schema import Config
from ..permission.service import PermissionService
from ..provider.registry import ProviderRegistry
from ..question.service import QuestionService
from ..sandbox.policy import ShellSandbox
from ..tool.context import CellReview, KernelBridge, NotebookAccess
from ..tool.registry import ToolRegistry
from .hooks import LoopHooks
from .service import SessionService


class StepRecorder(Protocol):
    """Records the project's files around tool calls that may change them (the workspace's checkpoints), so
    a turn can be undone; a failure to record never fails the tool."""

    async def before_tool(self, session_id: str, tool: str, args: Any = None) -> None:
        """`args` is the tool's input: a file tool names the file it will write, which may be kept aside."""

    async def after_tool(self, session_id: str, tool: str) -> None: ...


@dataclass(kw_only=True, slots=True)
class LoopDeps:
    sessions: SessionService
    agents: AgentRegistry
    providers: ProviderRegistry
    tools: ToolRegistry
    permissions: PermissionService
    questions: QuestionService
    bus: Bus
    loaded: LoadedConfig
    """What was read: instruction files, the global config folder, configured commands."""
    data_dir: Path
    """Where truncated tool outputs are kept."""
    kernel: KernelBridge | None = None
    """Set by the kernel extension when the workspace lives in a kernel; tools see it as `ctx.kernel`."""
    notebook: NotebookAccess | None = None
    """Set by the kernel extension: the notebook's cells, which tools see as `ctx.notebook`."""
    review: CellReview | None = None
    """Set by the kernel extension: where cell changes under review go, which tools see as `ctx.review`."""
    sandbox: ShellSandbox | None = None
    """The OS sandbox of shell commands (the `sandbox` setting); None runs them unconfined."""
    checkpoints: StepRecorder | None = None
    """Records file checkpoints around each tool call that may change files; None records nothing."""
    hooks: LoopHooks | None = None
    """Command hooks and plugins (`hooks`, `plugin`); None where none are configured."""

    @property
    def config(self) -> Config:
        """The merged settings."""
        return self.loaded.config

    @property
    def root(self) -> Path:
        """The git root (or the directory itself): the boundary of "inside the workspace"."""
        return self.loaded.root

    @property
    def directory(self) -> Path:
        """Where the workspace was opened (the root or a folder below it)."""
        return self.loaded.directory
