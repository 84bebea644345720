"""Tools: what agents can do, each behind the permission engine.

`Tool.run(raw_input, ctx)` is what the loop calls; `ToolContext` is everything a tool may use; the
registry holds the tools a workspace offers. `command_patterns` is how a shell line meets the rules.
"""

from .base import MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES, Tool, ToolResult
from .context import AgentSwitch, KernelBridge, TaskRunner, TodoStore, ToolContext
from .registry import ToolRegistry, default_registry
from .shell.parse import command_patterns

__all__ = ["MAX_OUTPUT_BYTES", "MAX_OUTPUT_LINES", "AgentSwitch", "KernelBridge", "TaskRunner", "TodoStore", "Tool",
           "ToolContext", "ToolRegistry", "ToolResult", "command_patterns", "default_registry"]
