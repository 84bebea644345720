"""Whose change each file of a turn is: the agent's tools', or the person's while the turn ran.

A turn's trees (before its first tool call, after each step) hold every byte that changed in the project
meanwhile, and two kinds of it are not the agent's:
- what changed between two of its tool calls, while the model thought (`BETWEEN_STEPS`) and in no step of a
  tool: the person saving a file;
- the session's own notebook, unless a file tool (`write`, `edit`) changed it: JupyterLab autosaves the open
  notebook, or the person presses save, while an agent runs, and the cells the agent edits reach the file by
  that same save. Those cells are the kernel's to list and to undo, not the file's.
The agent's changes are the rest: what its tools wrote (file tools, shell commands, a person's tools, MCP
servers' tools, python runs), which is what listings, diffs and undo summaries name as the turn's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from .. import fs
from .aside import WRITERS

BETWEEN_STEPS = "(between steps)"
"""The step name of what changed between two tool calls of a turn, not during one."""


def agents_paths(changed: Sequence[str], steps: Sequence[tuple[str, str]], before: str,
                 paths_between: Callable[[str, str], list[str]], own: str | None) -> set[str]:
    """The paths among `changed` (before to after the turn) that its tools wrote: `steps` are (tool, tree) in
    order, `paths_between(a, b)` what differs between two trees, `own` the session's notebook."""
    if not steps:  # recorded before steps were: every change is the turn's, as it was then
        return {p for p in changed if p != own}
    if own not in changed and all(tool != BETWEEN_STEPS for tool, _ in steps):
        return set(changed)
    written: set[str] = set()
    by_file_tool: set[str] = set()
    previous = before
    for tool, tree in steps:
        if tool != BETWEEN_STEPS:
            paths = paths_between(previous, tree)
            written.update(paths)
            if tool in WRITERS:
                by_file_tool.update(paths)
        previous = tree
    return {p for p in changed if p in written and (p != own or p in by_file_tool)}


def own_notebook(root: Path, notebook: str, paths: Sequence[str]) -> str | None:
    """The project path of the session's notebook, which is named relative to the Jupyter server's root (the
    project, a folder above it or one below it): the longest tail of its name that is a project file (or one
    of `paths`), else the shallowest of `paths` ending in it. One path at most: another notebook of the same
    name in another folder is a file like any other, and its undo must not be skipped in silence."""
    name = notebook.replace("\\", "/").strip("/")
    if not name:
        return None
    parts = name.split("/")
    for start in range(len(parts)):
        tail = "/".join(parts[start:])
        if tail in paths or fs.kind(root, tail) == "file":
            return tail
    below = sorted((p for p in paths if p.endswith("/" + name)), key=lambda p: (p.count("/"), p))
    return below[0] if below else None
