"""The one line `%load_ext opencode_nb` prints: the version, the model a prompt would use (and what chose it),
and where to start.

It is printed when the loading cell ends (IPython's `post_run_cell`), not while `%load_ext` runs: a
`%config Agent.model = …` later in the same cell then counts, and the workspace (built on a worker thread)
has had the cell's time to read the configuration. A kernel that loads the extension at start-up
(`c.InteractiveShellApp.extensions`) has no loading cell and prints nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .runner import NotebookAgent

WAIT_S = 10.0
"""How long the loading cell waits at most for the configuration to be read, so the line can name the model
(about half a second when the machine is idle, seconds when it is busy)."""

START = "start with a %%agent cell, the prompt on the lines below it; %agent help lists the rest"


def load_line(agent: NotebookAgent, timeout_s: float = WAIT_S) -> str:
    from ..version import __version__

    return f"opencode_nb {__version__} · {_model(agent, timeout_s)} · {START}"


def _model(agent: NotebookAgent, timeout_s: float) -> str:
    """The model in use, what chose it and what its provider still needs, or why that is not known yet."""
    future = agent.start_building()
    try:
        ws = future.result(timeout=timeout_s)
    except TimeoutError:
        return "model: still reading the configuration (%agent models shows it)"
    except Exception:
        return "the configuration has a problem: the next %agent cell says which"
    from .magics.preflight import agent_for, default_model, model_in_use

    try:
        answering = agent_for(ws, agent.settings.agent, None)
    except Exception:
        choice = default_model(ws)
    else:
        choice = model_in_use(ws, option=None, setting=agent.settings.model, agent=answering)
    status = ws.providers.status(choice.model.partition("/")[0])
    return f"model {choice.model} ({_shorter(choice.why, ws.directory)}; {status})"


def _shorter(why: str, directory: Path) -> str:
    """`/home/me/repo/play/opencode.yaml:3` said as `opencode.yaml:3` when it lies in the notebook's folder."""
    prefix = f"{directory}/"
    return why.removeprefix(prefix) if why.startswith(prefix) else why


def say_when_the_cell_ends(shell: Any, agent: NotebookAgent, show: Any) -> None:
    """Print the line once, at the end of the cell that loaded the extension."""

    def after(result: Any) -> None:
        shell.events.unregister("post_run_cell", after)
        cell = getattr(getattr(result, "info", None), "raw_cell", None) or ""
        if "opencode_nb" in cell:  # the cell loaded us; at start-up the first cell is the person's own
            show(load_line(agent))

    shell.events.register("post_run_cell", after)
