"""Tools: what agents can do, each behind the permission engine."""

from .base import MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES, Tool, ToolContext, ToolResult
from .registry import ToolRegistry, default_registry
from .shell import command_patterns

__all__ = ["MAX_OUTPUT_BYTES", "MAX_OUTPUT_LINES", "Tool", "ToolContext", "ToolRegistry", "ToolResult",
           "command_patterns", "default_registry"]
