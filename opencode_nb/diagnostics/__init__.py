"""Diagnostics after edits: the agent reads its own undefined names and syntax errors in the result of the
edit that made them, and fixes them before the person runs the code.

`Diagnostics` (in `service.py`) is the workspace's: it formats a changed file where a formatter is configured
(`formatter.py`), checks Python with `ruff check` (`ruff.py`) and, where installed and listed, pyright's
language server (`lsp.py`); `findings.py` says how the model and the card read the result. The tools that
change Python (`write`, `edit`, `notebook_edit`) call it through `tool/support/checks.py`, which hands it what
it needs of the call (the project, the cells, the kernel's names, a sandboxed way to run a formatter).
"""

from .service import Diagnostics

__all__ = ["Diagnostics"]
