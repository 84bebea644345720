"""The person's functions offered to this kernel's agents: found after each cell, kept in step with the namespace.

A function becomes a tool in two ways. `@tool` marks it (`tool/decorator.py`); after each cell the person's
namespace is searched for marked functions, so running the cell again with a changed function offers the new
one, and deleting it (`del query`) takes the tool away. `%agent tool add NAME` offers the function bound to
NAME, whatever it is later rebound to; `%agent tool remove NAME` takes either kind away (a marked function
comes back only when its cell runs again).

The tools live in the workspace's tool registry, like MCP tools; a workspace built anew (the configuration
changed) is given them again by `attach`. A name taken by a built-in or MCP tool is refused and said in the
cell's output. Each call is made live by `python/calls.py`; a call of a function deleted in the meantime is
a clear tool error, and the tool is dropped.
"""

from __future__ import annotations

import contextlib
import threading
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..tool.person import FunctionTool
    from ..workspace import Workspace

MARK = "__opencode_nb_tool__"
"""`tool.person.MARK`, spelt here so that the end of a cell that marked nothing imports nothing."""


class PersonTools:
    def __init__(self, shell: Any, say: Callable[[str], None] = print,
                 settled: Callable[[], None] = lambda: None) -> None:
        """`say`: where changes found after a cell are told (that cell's output). `settled`: waits until the
        workspace's build thread has imported what this imports (`NotebookAgent.imports_settled`)."""
        self.shell = shell
        self.say = say
        self.settled = settled
        self.tools: dict[str, FunctionTool] = {}
        """Tool id → the tool offered now."""
        self.added: dict[str, str] = {}
        """Tool id → the namespace name `%agent tool add` bound it to."""
        self.refused: dict[str, str] = {}
        """Tool id → why it is not offered (its name is taken), said once per function."""
        self.workspace: Workspace | None = None
        self.caller: Any = None
        self._lock = threading.Lock()
        self._registered = False

    # ------------------------------------------------------------------------------------------ wiring

    def register(self) -> None:
        """Watch the person's cells, and offer what is marked already (cells run before the extension loaded)."""
        if not self._registered:
            self.shell.events.register("post_run_cell", self._after_cell)
            self._registered = True
        if self._marked():
            self.sync(quiet=True)

    def unregister(self) -> None:
        if self._registered:
            with contextlib.suppress(ValueError):
                self.shell.events.unregister("post_run_cell", self._after_cell)
            self._registered = False

    def attach(self, ws: Workspace) -> None:
        """Offer the tools in `ws`, a workspace just built (on the build thread)."""
        with self._lock:
            self.workspace = ws
            for tool_id in list(self.tools):
                self._offer(self.tools[tool_id], ws, quiet=True)

    def _after_cell(self, result: Any = None) -> None:
        if not self.tools and not self.added and not self._marked():
            return  # the usual cell: nothing to offer, nothing to import
        try:
            self.settled()
            self.sync()
        except Exception as exc:  # a namespace we cannot read must not break the person's cells
            self.say(f"opencode_nb: the functions offered as tools could not be brought up to date: {exc}")

    # ------------------------------------------------------------------------------------------ the namespace

    def _marked(self) -> list[Any]:
        """The marked functions of the namespace, in its order."""
        return [value for name, value in list(self.shell.user_ns.items())
                if isinstance(value, types.FunctionType) and not name.startswith("_") and MARK in value.__dict__]

    def sync(self, *, quiet: bool = False) -> None:
        """Bring the tools in step with the namespace: new and redefined functions offered, deleted ones dropped."""
        from ..tool.person import tool_name

        namespace = self.shell.user_ns
        wanted: dict[str, Any] = {}
        for value in self._marked():
            options = value.__dict__[MARK]
            wanted.setdefault(tool_name(options.name or value.__name__), value)
        for tool_id, name in list(self.added.items()):
            value = namespace.get(name)
            if isinstance(value, types.FunctionType):
                wanted.setdefault(tool_id, value)
        with self._lock:
            for tool_id in [t for t in self.tools if t not in wanted]:
                self._drop(tool_id)
                if not quiet:
                    self.say(f"{tool_id} is no longer a tool for agents: its function is gone from the namespace.")
            for tool_id, function in wanted.items():
                current = self.tools.get(tool_id)
                if current is not None and current.function is function:
                    continue
                try:
                    made = self._make(function, tool_id)
                except (TypeError, ValueError) as exc:
                    if not quiet and self.refused.get(tool_id) != str(exc):
                        self.say(f"{tool_id} is not a tool for agents: {exc}")
                    self.refused[tool_id] = str(exc)
                    self._drop(tool_id)
                    continue
                offered = self._offer(made, self.workspace, quiet=quiet)
                if offered and not quiet:
                    self.say(f"{'Updated' if current is not None else 'New'} tool for agents: {made.signature()} "
                             "(each call asks first unless a rule allows it; %agent tool list)")

    def _make(self, function: Any, tool_id: str) -> FunctionTool:
        from ..tool.decorator import clash_with_builtin
        from ..tool.person import FunctionTool
        from .python.calls import LiveCaller

        if self.caller is None:
            self.caller = LiveCaller(self.shell)

        clash_with_builtin(tool_id)
        return FunctionTool.marked(function, name=tool_id, caller=self.caller,
                                   gone=lambda: self._gone(tool_id, function))

    def _offer(self, made: FunctionTool, ws: Workspace | None, *, quiet: bool) -> bool:
        """Put `made` in `ws`'s registry unless a tool that is not a person's function has its name."""
        if ws is not None:
            try:
                ws.tools.add(made)
            except ValueError as exc:
                if not quiet and self.refused.get(made.id) != str(exc):
                    self.say(f"{made.id} is not a tool for agents: {exc}")
                self.refused[made.id] = str(exc)
                self.tools.pop(made.id, None)
                return False
        self.refused.pop(made.id, None)
        self.tools[made.id] = made
        return True

    def _drop(self, tool_id: str) -> None:
        from ..tool.person import FunctionTool

        self.tools.pop(tool_id, None)
        ws = self.workspace
        if ws is not None:
            with contextlib.suppress(Exception):
                if isinstance(ws.tools.get(tool_id), FunctionTool):
                    ws.tools.unregister(tool_id)

    def _gone(self, tool_id: str, function: Any) -> str | None:
        """Why `function` may no longer be called: it is not in the namespace any more (the tool is dropped)."""
        if any(value is function for value in list(self.shell.user_ns.values())):
            return None
        with self._lock:
            if tool_id in self.tools and self.tools[tool_id].function is function:
                self._drop(tool_id)
        return (f"the function {getattr(function, '__name__', '?')} is no longer defined in the person's namespace "
                "(deleted or renamed)")

    # ------------------------------------------------------------------------------------------ %agent tool

    def add(self, name: str) -> str:
        """`%agent tool add NAME`: offer the function bound to NAME."""
        from ..tool.person import tool_name

        value = self.shell.user_ns.get(name)
        if value is None:
            raise LookupError(f"There is no {name} in the namespace: define the function first, then add it.")
        if not isinstance(value, types.FunctionType):
            raise TypeError(f"{name} is a {type(value).__name__}, not a function defined with def or async def.")
        tool_id = tool_name(name)
        made = self._make(value, tool_id)  # raises with what is wrong with its name or its parameters
        with self._lock:
            if not self._offer(made, self.workspace, quiet=True):
                raise ValueError(self.refused[made.id])
            self.added[made.id] = name
        return f"New tool for agents: {made.signature()} (each call asks first unless a rule allows it)."

    def remove(self, name: str) -> str:
        """`%agent tool remove NAME`: NAME is the tool's name or the function's."""
        tool_id = next((t for t, tool in self.tools.items()
                        if name in (t, getattr(tool.function, "__name__", None))), None)
        if tool_id is None:
            known = ", ".join(sorted(self.tools)) or "none"
            raise LookupError(f"{name} is not one of your tools (they are: {known}).")
        with self._lock:
            function = self.tools[tool_id].function
            self.added.pop(tool_id, None)
            with contextlib.suppress(AttributeError):
                delattr(function, MARK)
            self._drop(tool_id)
        return f"{tool_id} is no longer a tool for agents. Run its @tool cell again to offer it again."

    def describe(self, rules: Any, agent: str) -> str:
        """`%agent tool list`: each tool, its parameters, its description's first line and the rule in force."""
        from ..tool.person import rule_in_force

        if not self.tools:
            return ("No functions of yours are tools yet. Decorate one with @tool (from opencode_nb import tool), "
                    "or run %agent tool add NAME.")
        lines = [f"Your functions as tools (rules of {agent}):"]
        for tool_id, made in sorted(self.tools.items()):
            how = f"%agent tool add {self.added[tool_id]}" if tool_id in self.added else "@tool"
            lines.append(f"  {tool_id} — {made.signature()}  [{how}]")
            first = made.description.split("\n", 1)[0].strip()
            if first and not first.startswith("(A Python function"):
                lines.append(f"      {first}")
            properties = made.arguments.schema.get("properties", {})
            required = set(made.arguments.schema.get("required", []))
            for parameter, schema in properties.items():
                kind = schema.get("type") or ("any of " + "/".join(str(s.get("type", "?")) for s in schema["anyOf"])
                                              if "anyOf" in schema else "any JSON value")
                lines.append(f"      {parameter}: {kind}{'' if parameter in required else ' (optional)'}"
                             + (f" — {schema['description']}" if schema.get("description") else ""))
            lines.append(f"      rule: {rule_in_force(tool_id, rules)}")
        for tool_id, why in sorted(self.refused.items()):
            lines.append(f"  {tool_id} — not offered: {why}")
        return "\n".join(lines)
