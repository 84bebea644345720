"""Run a function in a forked child of the test process and get back what it returned (or raised), as JSON."""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Callable
from typing import Any


def in_child(function: Callable[[], Any], timeout_s: float = 30.0) -> Any:
    """`function()` in a fork; its JSON result, or {"raised": "..."}. The child never returns into pytest."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            result = {"value": function()}
        except BaseException as exc:  # the child must end here whatever happened
            result = {"raised": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()}
        try:
            os.write(write_fd, json.dumps(result, default=str).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks = []
    with os.fdopen(read_fd, "rb") as pipe:
        while chunk := pipe.read(65536):
            chunks.append(chunk)
    os.waitpid(pid, 0)
    data = json.loads(b"".join(chunks) or b'{"raised": "the child wrote nothing"}')
    return data.get("value", data)


def user_namespaces_work() -> bool:
    """Whether a process here may make a user namespace (root or not; Ubuntu 23.10+ and hardened kernels may
    forbid it)."""
    from opencode_nb.sandbox.linux import CLONE_NEWUSER, load

    libc = load()
    if libc is None:
        return False

    def run() -> bool:
        libc.unshare(CLONE_NEWUSER)
        return True
    return in_child(run) is True


def landlock_version() -> int:
    from opencode_nb.sandbox.landlock import abi
    from opencode_nb.sandbox.linux import load

    libc = load()
    return abi(libc) if libc is not None else 0
