"""What running a plan's steps needs of the kernel: its workspace, its current session, and running a prompt.

The plan modules take this rather than the kernel's whole `NotebookAgent` (which is one), so what they may
reach is written down here, and a test can stand in for it with a few attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...session.models import Part
    from ...workspace import Workspace
    from ..notebook.frontend import Frontend
    from ..presence import Presence


class PlanHost(Protocol):
    shell: Any
    """IPython's shell: the executing cell's count and the front end's request name the cell a step runs in."""
    session_id: str | None
    """The notebook's current session: the plan a prompt just approved is found in it."""
    presence: Presence
    frontend: Frontend
    gate: Callable[[], None]
    """Raises while no agent run may start (a mistake in a restriction stands): steps ask it before they
    record or show anything, so a refused run of steps says only why, as a refused prompt does."""

    @property
    def detached(self) -> bool:
        """Whether prompts leave their cell at once: steps must not, so a failing one stops Run All."""
        ...

    def workspace(self) -> Workspace: ...

    async def aworkspace(self) -> Workspace: ...

    async def prompt(self, text: str, *, agent: str | None = None, model: str | None = None,
                     session: str | None = None, new: bool = False, background: bool = False,
                     parts: Sequence[Part] = (), cell_id: str | None = None,
                     show: Callable[[list[dict[str, Any]]], None] | None = None) -> Any: ...
