"""Tools: what agents can do, each behind the permission engine.

`Tool.run(raw_input, ctx)` is what the loop calls; `ToolContext` is everything a tool may use; the
registry holds the tools a workspace offers. `command_patterns` is how a shell line meets the rules.
The package is also the `@tool` decorator (`from opencode_nb import tool`; see `decorator.py`).
"""

import sys as _sys
import types as _types
from typing import Any

from .base import MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES, Tool, ToolResult
from .context import ToolContext
from .registry import ToolRegistry, default_registry

__all__ = ["MAX_OUTPUT_BYTES", "MAX_OUTPUT_LINES", "Tool", "ToolContext", "ToolRegistry", "ToolResult",
           "default_registry"]


class _ToolPackage(_types.ModuleType):
    """`from opencode_nb import tool` gives this package, so the package itself is the `@tool` decorator:
    calling it calls `decorator.tool`. The name is not rebound to the function instead because code and tests
    reach the tools' modules by dotted path (`opencode_nb.tool.grep`), which must keep working."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from .decorator import tool

        return tool(*args, **kwargs)


_sys.modules[__name__].__class__ = _ToolPackage
