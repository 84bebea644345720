"""How a stopped prompt cell ends: failed, so Run All stops there, with one short line and no traceback.

An agent cell can be stopped three ways: its Stop button, `%agent stop`, or the kernel's interrupt (■).
All three end the cell alike. The execute reply must say `error`: that is what makes ipykernel drop the
cells queued behind it (Run All, nbclient) and what tells a front end the run did not finish. Being a
`KeyboardInterrupt`, the error reads as the person's own doing to whoever catches interrupts (a plan
step records itself as stopped); `_render_traceback_` is IPython's hook for an exception that shows its
own lines instead of a traceback into our code.
"""

from __future__ import annotations

STOPPED = "■ Stopped: the agent was stopped; what it did so far is kept in the session."
"""What a stopped cell says under its transcript."""


class AgentStopped(KeyboardInterrupt):
    """The person stopped the agent this cell was running."""

    def __init__(self, message: str = STOPPED) -> None:
        super().__init__(message)

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else STOPPED

    def _render_traceback_(self) -> list[str]:
        return [self.message]

    def output(self) -> dict[str, object]:
        """The error output a cell shows for it (nbformat), as IPython would produce it."""
        return {"output_type": "error", "ename": type(self).__name__, "evalue": self.message,
                "traceback": self._render_traceback_()}
