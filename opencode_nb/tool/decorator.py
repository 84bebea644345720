"""`@tool`: marks a function of the notebook as a tool for the agents of its kernel.

The decorator only checks and marks; a kernel with the extension loaded finds marked functions in the
person's namespace after each cell and offers them (`kernel/person_tools.py`), and `FunctionTool`
(`person.py`) is what the agents call. Checking here means a name taken by a built-in tool, or a parameter
no model could fill, is an error in the very cell that defines the function: one line that says what to
change, with no traceback through our code (`_render_traceback_` is IPython's hook for that).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, TypeVar, overload

from .person import MARK, ToolOptions, arguments_of, tool_name
from .reserved import refuse_reserved

F = TypeVar("F", bound=Callable[..., Any])


class UnusableFunction(TypeError):
    """The function cannot be a tool as written (not a function, or a parameter no model can fill)."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class UnusableToolName(ValueError):
    """The tool's name is a built-in tool's or permission's, or has nothing a tool name may hold."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


@overload
def tool(function: F, /) -> F: ...
@overload
def tool(*, name: str | None = None, description: str | None = None,
         timeout: float | None = None) -> Callable[[F], F]: ...


def tool(function: Any = None, /, *, name: str | None = None, description: str | None = None,
         timeout: float | None = None) -> Any:
    """Make a function of the notebook a tool for the agents of this kernel (see `person.py` for what they see).

    Use it bare (`@tool`) or with options (`@tool(name="sales", description="...", timeout=120)`). The function
    is returned unchanged, only marked; running the cell again with a changed function updates the tool, and
    deleting the function (`del query`) takes the tool away.

    Args:
        name: the tool's name, instead of the function's.
        description: what the model reads, instead of the docstring's first paragraph.
        timeout: seconds a call may run before it is stopped (default 60).

    Raises:
        UnusableFunction: (a TypeError) not a function, or a parameter's type hint has no JSON form a model
            could send.
        UnusableToolName: (a ValueError) the name is a built-in tool's or a built-in permission's name.
    """
    options = ToolOptions(name, description, timeout)

    def mark(target: Any) -> Any:
        if not isinstance(target, types.FunctionType):
            raise UnusableFunction(f"@tool takes a function defined with def or async def, not "
                                   f"{type(target).__name__}")
        try:
            tool_id = tool_name(options.name or target.__name__)
            clash_with_builtin(tool_id)
        except ValueError as exc:
            raise UnusableToolName(str(exc)) from None
        try:
            arguments_of(target, tool_id)  # a parameter no model could fill is said now, not at the first call
        except TypeError as exc:
            raise UnusableFunction(str(exc)) from None
        setattr(target, MARK, options)
        return target

    if function is not None:
        return mark(function)
    return mark


def clash_with_builtin(tool_id: str) -> None:
    """Raises ValueError naming the built-in tool `tool_id` would replace, or the built-in permission it would
    share (`reserved.py`: `external_directory`, `git_internals`, ...)."""
    refuse_reserved(tool_id)
