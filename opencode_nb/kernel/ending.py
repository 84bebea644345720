"""How a prompt's run ends in its cell: done, error, stopped or rejected; what an attached cell raises; what a cell the
kernel can no longer reach gets as its output instead.

Apart from the runner, which starts and follows runs, because these are the cell's side of the story, read by
the same rules wherever a run ends (an attached cell, a detached one, a reloaded page).
"""

from __future__ import annotations

from typing import Any

from .stopped import AgentStopped


def status_of(result: Any, *, stop_requested: bool) -> str:
    """done, error, stopped or rejected: a run the person asked to stop counts as stopped however it ended.

    "rejected" is a run a person's plain Reject ended: the loop stops after the step whose call was refused,
    so its last answer still asks for tool calls and has no error. It is not a failure (the person chose
    it), but it is not done either, and the cell says so (`views.run_frame.ended_note`).
    """
    error = getattr(result, "error", None)
    if error is not None:
        return "stopped" if error.kind == "aborted" or stop_requested else "error"
    if stop_requested:
        return "stopped"
    return "rejected" if getattr(result, "finish", None) == "tool-calls" else "done"


def failure(status: str, result: Any) -> str | None:
    """Why the run failed, in one line, or None when it did not."""
    if status != "error":
        return None
    if isinstance(result, Exception):
        return str(result)
    error = getattr(result, "error", None)
    return f"The agent stopped with an error: {error.message}" if error is not None else "The agent stopped."


def cell_error(status: str, result: Any) -> BaseException | None:
    """What an attached cell raises when its run ended as `status`: None when the run finished."""
    if status == "stopped":
        return AgentStopped()
    said = failure(status, result)
    if said:
        from IPython.core.error import UsageError

        return UsageError(said)
    return None


def error_output(error: BaseException) -> dict[str, Any]:
    """The output IPython shows for `error` in a cell (nbformat), for a cell the kernel cannot reach."""
    if isinstance(error, AgentStopped):
        return error.output()
    return {"output_type": "stream", "name": "stderr", "text": f"UsageError: {error}\n"}


def with_error(bundle: dict[str, str], exc: Exception) -> dict[str, str]:
    """A transcript bundle with the error that ended its run under it."""
    from ..views.render import error_html

    html = error_html(str(exc))
    return {"text/html": bundle.get("text/html", "") + html, "text/plain": f"{bundle.get('text/plain', '')}\n{exc}"}
