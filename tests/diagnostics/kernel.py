"""The part of `KernelBridge` the checks of a cell read: the language, the notebook's name, the namespace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class Kernel:
    language = "python"
    notebook_path = "analysis.ipynb"

    def __init__(self, names: Mapping[str, Any]) -> None:
        self.user_ns = dict(names)
