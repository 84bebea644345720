"""Our data dirs, out of sight of every sandboxed process but for the folders it is meant to write there.

The data dir holds what we later trust and run: the checkpoint store (a git dir, whose `config` can name
programs git runs: `core.fsmonitor`, hooks, filters), the session database, the config guard's records,
`mcp-approved.json`, the quarantine folder and each MCP server's package caches (one server's cache is code
another later runs). None of it may be written by a process we start for an agent, yet nothing kept it from
one where the data dir lies inside a writable folder: with the project at `$HOME` and the default data dir
`~/.local/share/opencode_nb`, a sandboxed command wrote the store's `core.fsmonitor`, and the kernel's next
snapshot ran it outside any sandbox.

So every sandbox we build (bash, command templates, MCP servers, the python worker: all go through
`bwrap.bwrap_args` or `seatbelt.sandbox_exec_args`) hides each data dir `folders()` names, wherever it is
(inside the project or not), and then shows again, as they were, only the folders of that process inside it
(its tool-output folder, its own cache folder): see `bwrap.out_of_sight`. One registry rather than a
parameter per launcher, so a launcher added later cannot forget it: a `Workspace` registers its data dir
while it is open, and `$OPENCODE_NB_DATA_DIR` and the default platformdirs location count whenever they
exist, so a process started before or without a workspace (the python worker) hides them too.

What does not hold: a data dir that is the project root itself cannot be hidden without hiding the project,
so `ShellSandbox` refuses to run anything there (`equal_to`). A data dir that does not exist yet is not
hidden (there is nothing of ours in it to protect), and a workspace creates its own before it starts any
process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

DATA_DIR_ENV = "OPENCODE_NB_DATA_DIR"

_lock = threading.Lock()
_registered: dict[Path, int] = {}
"""Each open workspace's data dir (real path), counted: two workspaces may share one."""


def register(folder: Path) -> Callable[[], None]:
    """`folder` holds our data from now on: hidden from every sandbox built in this process until the returned
    callable is called (more calls of it do nothing)."""
    real = Path(os.path.realpath(folder))
    with _lock:
        _registered[real] = _registered.get(real, 0) + 1
    done = threading.Event()

    def forget() -> None:
        if done.is_set():
            return
        done.set()
        with _lock:
            count = _registered.get(real, 0) - 1
            if count > 0:
                _registered[real] = count
            else:
                _registered.pop(real, None)

    return forget


def defaults() -> list[Path]:
    """Where a workspace of this process would keep its data without being told: the variable, else the
    platform's user data dir."""
    found: list[Path] = []
    named = os.environ.get(DATA_DIR_ENV)
    if named:
        found.append(Path(named).expanduser())
    try:
        import platformdirs

        found.append(Path(platformdirs.user_data_dir("opencode_nb", appauthor=False)))
    except Exception:  # no platformdirs, or no home to find: nothing to hide there
        pass
    return found


def folders() -> list[Path]:
    """Every data dir to hide, as real paths, existing ones only, outermost first: hidden in that order, one
    inside another is hidden again after the outer one's writable folders (a project inside it) came back."""
    with _lock:
        candidates = [*_registered]
    candidates += [Path(os.path.realpath(p)) for p in defaults()]
    return sorted({p for p in candidates if p.is_dir()}, key=lambda p: (len(p.parts), p))


def equal_to(paths: Sequence[Path]) -> list[Path]:
    """The data dirs that are one of `paths` (real paths): what cannot be hidden without hiding that path."""
    real = {Path(os.path.realpath(p)) for p in paths}
    return [p for p in folders() if p in real]
