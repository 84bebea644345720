"""What exists only inside IPython: the extension, the magics, and the bridge to the workspace.

`load_ipython_extension` registers the magics and the `%%agent` input transformer, starts building the
workspace on a worker thread, opens the front-end comm (`frontend.py`), starts watching which cell runs
(`activity.py`) and which cells raise (`fix/failures.py`), keeps each cell's replies addressed to it
(`parent_guard.py`), shows the magics' usage errors as text that wraps (`magics/usage.py`) and starts the
ticker. It imports nothing heavy, so `%load_ext opencode_nb` returns in well under 300 ms; the first prompt
waits for the workspace if it is not ready yet. The loading cell ends with one line (`greeting.py`), and the first
`%agent` cell with the notebook defaults in force (`_say_defaults`).

The ticker is a task that wakes the kernel's event loop every 0.25 s. ipykernel turns SIGINT into a
callback that does not wake the loop by itself, so without the ticker an interrupt (■) would wait for
the next unrelated event before it cancels the awaiting cell.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .magics.agent import AgentMagics, usage_errors
from .magics.settings import Agent
from .magics.transform import transform
from .notebook.frontend import Frontend
from .presence import Presence
from .runner import NotebookAgent

if TYPE_CHECKING:
    from ..workspace import Workspace

log = logging.getLogger(__name__)

TICK_S = 0.25

_state: dict[str, Any] = {}


def load_ipython_extension(shell: Any) -> None:
    if "agent" in _state:
        return  # loaded already: %load_ext twice is harmless
    from IPython.display import display

    from ..version import __version__

    terminal = getattr(shell, "kernel", None) is None
    settings = Agent(parent=shell, config=shell.config)
    presence = Presence(terminal=terminal, policy=lambda: settings.permission)
    agent = NotebookAgent(shell, settings, presence, frontend=Frontend(version=__version__, on_hello=presence.greeted))

    def show(bundle: Any) -> None:
        if inspect.isawaitable(bundle):  # a subcommand that waits on the front end (%agent undo)
            agent.later(bundle, show)
        else:
            display(bundle, raw=True)

    magics = AgentMagics(shell, agent, show)
    shell.register_magics(magics)
    shell.configurables.append(settings)
    shell.input_transformers_cleanup.insert(0, transform)
    _install_completion(shell, agent.workspace)
    agent.activity.register(shell)
    agent.failures.register(shell)
    agent.person_tools.register()
    if not terminal:
        from .parent_guard import guard

        guard(shell.kernel)
        agent.frontend.open()
        from .magics.usage import show_ours_as_prose

        _state["restore_usage_errors"] = show_ours_as_prose(shell, lambda bundle: display(bundle, raw=True))
    _state.update(agent=agent, magics=magics, settings=settings, shell=shell, terminal=terminal)
    _quiet_config_warnings()
    _ensure_loop_helpers()
    agent.start_workspace()
    from .greeting import say_when_the_cell_ends

    say_when_the_cell_ends(shell, agent, lambda line: show(listing_text(line)))


def _install_completion(shell: Any, workspace: Callable[[], Workspace]) -> None:
    from .magics.complete import mention_matcher

    def names() -> tuple[list[str], list[str], Path]:
        ws = workspace()
        subagents = [a.name for a in ws.agents.subagents()]
        variables = sorted(k for k, v in shell.user_ns.items() if not k.startswith("_") and not callable(v)
                           and type(v).__name__ != "module" and k not in ("In", "Out", "exit", "quit"))
        return subagents, variables, ws.directory

    completer = getattr(shell, "Completer", None)
    if completer is not None:
        matcher = mention_matcher(names)
        completer.custom_matchers.append(matcher)
        _state["matcher"] = matcher


def _ensure_loop_helpers() -> None:
    """Start the ticker and the interrupt hook once the kernel's loop runs.

    Loaded from `c.InteractiveShellApp.extensions`, the extension loads before the loop starts; the first
    prompt then finishes the job.
    """
    if _state.get("ticker") is not None or _state.get("terminal"):
        return
    _state["ticker"] = _start_ticker()
    if _state["ticker"] is not None:
        _install_interrupt(_state["shell"], _state["agent"])


def _quiet_config_warnings() -> None:
    """The magics show configuration warnings themselves, once, as plain lines (reconfig.py); Python's display
    of the same warnings would add a line of our source under each, in whatever cell happens to run."""
    import warnings

    from ..errors import ConfigWarning

    warnings.filterwarnings("ignore", category=ConfigWarning)
    _state["warning_filter"] = warnings.filters[0]


def unload_ipython_extension(shell: Any) -> None:
    import warnings

    agent: NotebookAgent | None = _state.get("agent")
    if agent is None:
        return
    quiet = _state.pop("warning_filter", None)
    if quiet in warnings.filters:
        # An "ignore" filter leaves nothing in the modules' warning registries, so taking it out needs no
        # reset of them (nor the private `warnings._filters_mutated`, which Python 3.14 renamed).
        filters: list[Any] = warnings.filters  # type: ignore[assignment]  # typeshed says Sequence; it is a list
        filters.remove(quiet)
    agent.stop()
    agent.frontend.close()
    agent.activity.unregister()
    agent.failures.unregister()
    agent.person_tools.unregister()
    if transform in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.remove(transform)
    matcher = _state.pop("matcher", None)
    completer = getattr(shell, "Completer", None)
    if matcher is not None and completer is not None and matcher in completer.custom_matchers:
        completer.custom_matchers.remove(matcher)
    settings = _state.get("settings")
    if settings in shell.configurables:
        shell.configurables.remove(settings)
    ticker = _state.get("ticker")
    if ticker is not None:
        ticker.cancel()
    for undo in ("restore_interrupt", "restore_usage_errors"):
        restore = _state.get(undo)
        if restore is not None:
            restore()
    magics = _state.get("magics")
    if magics is not None:
        shell.magics_manager.magics["line"].pop("agent", None)
        shell.magics_manager.magics["cell"].pop("agent", None)
    _state.clear()


def current() -> NotebookAgent:
    agent = _state.get("agent")
    if agent is None:
        from IPython.core.error import UsageError

        raise UsageError("opencode_nb is not loaded: run %load_ext opencode_nb first")
    return agent


async def run_cell(args: str, body: str) -> None:
    """What a `%%agent` cell becomes: run its prompt, awaited by the cell."""
    magics = _magics()
    await _say_defaults(magics)
    with usage_errors():
        await magics.prompt(args, body)


async def run_line(line: str) -> None:
    """What a top-level `%agent …` line becomes: a subcommand, or a one-line prompt."""
    magics = _magics()
    with usage_errors():
        magics.check_line(line)  # a line refused as mistyped ran nothing: the defaults wait for one that runs
    await _say_defaults(magics)
    with usage_errors():
        prompt = magics.line(line)
        if prompt is not None:
            await magics.prompt(*prompt)
        await magics.agent.settle()  # a subcommand still waiting on the front end ends with the cell


async def _say_defaults(magics: AgentMagics) -> None:
    """The first `%agent` cell of a kernel starts with the notebook defaults in force, once the configuration is
    read (a build that fails is left to the cell's own magic to report)."""
    agent = magics.agent
    if agent.defaults_said:
        return
    built = asyncio.wrap_future(agent.start_building())
    await asyncio.wait([built])
    if not built.cancelled():
        built.exception()  # seen here, so asyncio does not log it: the cell's magic reports a failed build
    line = agent.defaults_notice()
    if line is not None:
        magics.display(listing_text(line))


def listing_text(line: str) -> dict[str, str]:
    from .magics.listing import text

    return text(line)


def _magics() -> AgentMagics:
    current().imports_settled()
    _ensure_loop_helpers()
    return _state["magics"]


def _install_interrupt(shell: Any, agent: NotebookAgent) -> None:
    """Make the kernel's interrupt (■) also stop agents running detached.

    ipykernel ignores SIGINT between messages and, while it handles one, installs Python's default handler
    (or, for an awaiting cell, a handler that cancels the cell), restoring afterwards the handler it saved
    (`kernel.saved_sigint_handler`). Putting ours there makes an interrupt of an idle kernel stop the
    detached runs; an interrupted cell behaves exactly as before.
    """
    import signal

    kernel = getattr(shell, "kernel", None)
    if kernel is None or not hasattr(kernel, "saved_sigint_handler"):
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    idle_previous = kernel.saved_sigint_handler

    def on_sigint(signum: int, frame: Any) -> None:
        if agent.runs:
            loop.call_soon_threadsafe(agent.stop)
        elif callable(idle_previous):
            idle_previous(signum, frame)

    kernel.saved_sigint_handler = on_sigint

    def restore() -> None:
        if kernel.saved_sigint_handler is on_sigint:
            kernel.saved_sigint_handler = idle_previous
        if signal.getsignal(signal.SIGINT) is on_sigint:
            signal.signal(signal.SIGINT, idle_previous)

    _state["restore_interrupt"] = restore


def _start_ticker() -> asyncio.Task[None] | None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None  # terminal IPython: cells run their own loop; nothing to keep awake between them

    async def tick() -> None:
        while True:
            await asyncio.sleep(TICK_S)

    return loop.create_task(tick(), name="opencode-nb-ticker")


__all__ = ["load_ipython_extension", "run_cell", "run_line", "unload_ipython_extension"]
