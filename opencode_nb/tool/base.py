"""What a tool is, what it gets to work with, and what it gives back.

A tool is a pydantic parameter model, a description written for the model (a `.txt` beside the tool's
module), and `execute(params, ctx)`. `Tool.run` is the one entry the loop uses: it validates the raw
input (an invalid call becomes an error the model reads, naming the field to fix) and bounds the output
(the full text is saved to a file the model can read in pieces).

Tools see the world only through `ToolContext`: the workspace directory, `ask` for permissions (bound by
the loop to the session, the agent and its ruleset), `update` for live progress, and the session's todo
list and question service. They never import the loop or the Jupyter layer.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from .. import id as ids
from ..errors import ToolError
from ..provider.request import ToolSpec
from ..session.events import Todo
from ..session.models import Attachment

MAX_OUTPUT_LINES = 2000
MAX_OUTPUT_BYTES = 50 * 1024
"""Outputs beyond either bound are cut; the whole text is kept in a file the model can read in pieces."""

P = TypeVar("P", bound=BaseModel)

Ask = Callable[..., Awaitable[None]]
"""`await ask(permission, patterns, always=None, metadata=None)`; raises Denied/Rejected/CorrectedError."""


@dataclass(frozen=True)
class ToolResult:
    title: str
    output: str
    metadata: dict[str, Any] = field(default_factory=dict)
    attachments: list[Attachment] = field(default_factory=list)


class TodoStore(Protocol):
    def todos(self, session_id: str) -> list[Todo]: ...

    def set_todos(self, session_id: str, todos: list[Todo]) -> None: ...


@dataclass
class ToolContext:
    session_id: str
    message_id: str
    call_id: str
    agent: str
    directory: Path
    """The workspace root: relative paths are resolved against it, and leaving it asks."""
    data_dir: Path
    ask: Ask
    update: Callable[[str | None, dict[str, Any] | None], None] = lambda title, metadata: None
    """Live progress of the running call: a title, and metadata merged into what views show."""
    todos: TodoStore | None = None
    questions: Any = None
    """The workspace's QuestionService, for the question tool."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Services of later tools (the task tool's runner, the kernel bridge)."""


class Tool(Generic[P]):
    id: ClassVar[str]
    params: ClassVar[type[BaseModel]]

    @property
    def description(self) -> str:
        """The `<id>.txt` beside the tool's module: product copy for the model, reviewed like UI text."""
        return _description(type(self).__module__, self.id)

    def spec(self) -> ToolSpec:
        """What the model is told about the tool; built once, since the schema never changes."""
        cached = self.__dict__.get("_spec")
        if cached is None:
            cached = ToolSpec(name=self.id, description=self.description, parameters=self.params.model_json_schema())
            self.__dict__["_spec"] = cached
        return cached

    async def execute(self, params: P, ctx: ToolContext) -> ToolResult:
        raise NotImplementedError

    async def run(self, raw_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            params = self.params.model_validate(raw_input)
        except ValidationError as exc:
            raise ToolError(invalid_arguments(self.id, exc)) from None
        result = await self.execute(params, ctx)  # type: ignore[arg-type]
        return truncate(result, ctx)


def invalid_arguments(tool_id: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "(input)"
        problems.append(f"- {where}: {error['msg']}")
    return (f"The arguments for the {tool_id} tool are invalid:\n" + "\n".join(problems)
            + "\nRewrite the input so that it matches the tool's schema, then call it again.")


def truncate(result: ToolResult, ctx: ToolContext) -> ToolResult:
    output = result.output
    lines = output.splitlines()
    if len(lines) <= MAX_OUTPUT_LINES and len(output.encode()) <= MAX_OUTPUT_BYTES:
        return result
    folder = ctx.data_dir / "tool-output"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ids.ascending("tool")
    path.write_text(output, encoding="utf-8")
    kept: list[str] = []
    size = 0
    for line in lines[:MAX_OUTPUT_LINES]:
        size += len(line.encode()) + 1
        if size > MAX_OUTPUT_BYTES:
            break
        kept.append(line)
    cut = len(lines) - len(kept)
    note = (f"\n\n... {cut} more lines were cut. The full output is saved in {path}: read it with the read tool "
            "(offset and limit) or search it with grep instead of reading it all.")
    return ToolResult(result.title, "\n".join(kept) + note, {**result.metadata, "truncated": True,
                                                              "output_path": str(path)}, result.attachments)


@cache
def _description(module: str, tool_id: str) -> str:
    package = module.rpartition(".")[0]
    return files(package).joinpath(f"{tool_id}.txt").read_text(encoding="utf-8").strip()


def relative(ctx: ToolContext, path: Path) -> str:
    """A path as permission patterns show it: relative to the workspace when inside it, else absolute."""
    try:
        return path.relative_to(ctx.directory).as_posix()
    except ValueError:
        return path.as_posix()


def resolve_path(ctx: ToolContext, raw: str) -> Path:
    """An absolute, normalised path (`..` and symlinks resolved) for a path the model gave."""
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = ctx.directory / path
    return path.resolve()


async def ask_external(ctx: ToolContext, path: Path) -> None:
    """Paths outside the workspace also need the `external_directory` permission, per directory."""
    root = ctx.directory.resolve()
    if path == root or root in path.parents:
        return
    folder = path if path.is_dir() else path.parent
    pattern = f"{folder.as_posix()}/*"
    await ctx.ask("external_directory", [pattern], always=[pattern], metadata={"path": str(path)})


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
