"""Whether a process still exists, for records that name the process that wrote them (a run in flight, a
scratch folder in use): its owner may have died without cleaning up."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """True while `pid` exists, even as somebody else's process (not ours to judge)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
