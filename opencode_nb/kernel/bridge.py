"""The live kernel as tools see it: `ctx.kernel`, filled only when the workspace runs in a kernel.

Tools never import IPython or this package; they receive this object through their context, typed by
`opencode_nb.tool.context.KernelBridge`, and a workspace outside a kernel simply has none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


class IPythonBridge:
    def __init__(self, shell: Any, notebook_path: Callable[[], str | None]) -> None:
        self._shell = shell
        self._notebook_path = notebook_path

    @property
    def language(self) -> str:
        """What the kernel reports as its language; IPython's is python."""
        kernel = getattr(self._shell, "kernel", None)
        info = getattr(kernel, "language_info", None) or {}
        return str(info.get("name") or "python")

    @property
    def notebook_path(self) -> str | None:
        """Read at each use: the front end may say which notebook it is only after the workspace is built."""
        return self._notebook_path()

    @property
    def user_ns(self) -> Mapping[str, Any]:
        return self._shell.user_ns
