"""What the kernel says about the cell running now: its id, its execution count, and whether this ipykernel
hands widget messages to a cell while it awaits.
"""

from __future__ import annotations

import functools
from typing import Any


def calling_cell_id(shell: Any) -> str | None:
    """The id JupyterLab puts in the metadata of the execute request of the cell running now."""
    kernel = getattr(shell, "kernel", None)
    try:
        parent = kernel.get_parent() if kernel is not None else None
    except Exception:
        return None
    return ((parent or {}).get("metadata") or {}).get("cellId")


def cell_count(shell: Any) -> int | None:
    """The execution count of the cell running now: IPython counts a cell as it starts it (as ipykernel's
    reply does, one less than the shell's counter)."""
    count = getattr(shell, "execution_count", None)
    return count - 1 if isinstance(count, int) and count > 1 else None


@functools.cache
def delivers_to_awaiting_cells() -> bool:
    """ipykernel 7.4 is the first to dispatch widget messages while a cell awaits."""
    try:
        from importlib.metadata import version

        parts = version("ipykernel").split(".")
        return (int(parts[0]), int(parts[1])) >= (7, 4)
    except Exception:
        return False
