"""Throwaway copies of the sample project, and making sure none outlives the process that made it.

The quickstart copies the sample into the temporary directory so that running it never touches anything
of the person's. A copy is removed when the process that made it (the notebook's kernel) exits; a kernel
that was killed cannot do that, so each new copy first removes the copies of processes that are gone. A
copy's folder name carries its process id for that reason.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
from importlib.resources import as_file, files
from pathlib import Path

from ..pids import alive as _alive

QUICKSTART_PREFIX = "opencode-nb-quickstart-"
UNOWNED_AGE_S = 24 * 3600
"""A copy whose name names no process (made by an earlier version) is left alone for a day, then removed."""


def copy_sample(destination: Path) -> Path:
    """The sample project copied to `destination/weather-stats`."""
    project = destination / "weather-stats"
    with as_file(files(__package__).joinpath("sample")) as sample:
        shutil.copytree(sample, project, dirs_exist_ok=True)
    return project


def process_scratch(prefix: str = QUICKSTART_PREFIX) -> Path:
    """A new temporary folder, removed when this process exits, after removing those of exited processes."""
    remove_leftovers(prefix)
    folder = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def remove_leftovers(prefix: str = QUICKSTART_PREFIX, *, now: float | None = None) -> list[Path]:
    """Remove the folders `prefix*` of ours in the temporary directory whose process has exited."""
    removed = []
    now = time.time() if now is None else now
    for folder in Path(tempfile.gettempdir()).glob(f"{prefix}*"):
        try:
            info = folder.stat()
        except OSError:
            continue
        if not folder.is_dir() or info.st_uid != _uid(info.st_uid):
            continue
        pid = folder.name[len(prefix):].split("-", 1)[0]
        gone = not _alive(int(pid)) if pid.isdigit() else now - info.st_mtime > UNOWNED_AGE_S
        if gone:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _uid(default: int) -> int:
    getuid = getattr(os, "getuid", None)  # not on Windows, where the temporary directory is the user's own
    return getuid() if getuid is not None else default

