"""Finding, from outside, the processes a sandbox's code started: by a marker in their command line, since
inside a PID namespace the code cannot know their real PIDs."""

from __future__ import annotations

import os
from pathlib import Path


def gone(pid: int) -> bool:
    """Not running: no such process, or a zombie its new parent (init) has yet to reap."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def running(marker: str) -> list[int]:
    """Live processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes() and not gone(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def unreaped_children() -> list[int]:
    """This process's children that ended and were never waited for."""
    children: list[int] = []
    for thread in os.listdir(f"/proc/{os.getpid()}/task"):
        try:
            children += [int(c) for c in Path(f"/proc/{os.getpid()}/task/{thread}/children").read_text().split()]
        except OSError:
            continue
    return [c for c in children if Path(f"/proc/{c}").exists() and gone(c)]
