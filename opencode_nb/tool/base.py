"""What a tool is, what it gets to work with, and what it gives back.

A tool is a pydantic parameter model, a description written for the model (`<id>.txt` beside the tool's
module) and `execute(params, ctx)`. `Tool.run` is the one entry the loop uses:

    result = await tool.run(raw_input, ctx)     # ToolResult(title, output, metadata, attachments)

It validates the raw input (an invalid call becomes a `ToolError` naming the field to fix, which the
model reads as the result) and bounds the output: past `MAX_OUTPUT_LINES` lines or `MAX_OUTPUT_BYTES`
bytes the text is cut, the whole of it is saved under `data_dir/tool-output/`, and the cut text says how
to read the rest. A tool that bounds its own output (read pages by lines, bash keeps the tail) says so by
setting `metadata["truncated"]` (True or False) and is left alone.

Tools see the world only through `ToolContext`. They never import the loop or the Jupyter layer:

- `ask(permission, patterns, always=None, metadata=None, *, always_ask=False)` returns when the call may go
  ahead and raises `DeniedError`, `RejectedError` or `CorrectedError` otherwise. The loop binds it to the
  session, the agent and its ruleset. `metadata` is what the person sees in the prompt (a diff, a command);
  `always_ask=True` asks a person even when the rules allow (a shell line that did not parse).
- `update(title, metadata)` publishes live progress on the running tool part (bash's output tail).
- `todos`, `questions`, `tasks`, `switch_agent`, `plan_path`, `model` and `kernel` are named, typed fields
  (see `context.py`); each is None where a run cannot supply it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from .. import id as ids
from ..errors import ToolError
from ..provider.request import ToolSpec
from ..values import Attachment
from .context import Ask, TodoStore, ToolContext, Update

if TYPE_CHECKING:
    from ..agent import AgentInfo, AgentRegistry

__all__ = ["MAX_OUTPUT_BYTES", "MAX_OUTPUT_LINES", "Ask", "TodoStore", "Tool", "ToolContext", "ToolResult", "Update"]

MAX_OUTPUT_LINES = 2000
MAX_OUTPUT_BYTES = 50 * 1024
"""Outputs beyond either bound are cut; the whole text is kept in a file the model can read in pieces."""

OUTPUT_FOLDER = "tool-output"
"""Under `ctx.data_dir`; agents' default rules let them read it even though it is outside the workspace."""

P = TypeVar("P", bound=BaseModel)

@dataclass(frozen=True)
class ToolResult:
    title: str
    """One line for the tool card: the path, the pattern, the command's description."""
    output: str
    """What the model reads."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """What views show besides the output (a diff, an exit code); the model never sees it."""
    attachments: list[Attachment] = field(default_factory=list)


class Tool(Generic[P]):
    """A tool the model can call. Subclasses set `id` and `params` and write `execute`."""

    id: ClassVar[str]
    """The name the model sees; the description is `<id>.txt` beside the module."""
    params: ClassVar[type[BaseModel]]

    @property
    def description(self) -> str:
        """Product copy for the model, reviewed like UI text: when to use the tool, when not, examples."""
        return _description(type(self).__module__, self.id)

    def spec(self) -> ToolSpec:
        """Name, description and JSON schema for the provider; built once, since they never change."""
        cached = self.__dict__.get("_spec")
        if cached is None:
            cached = ToolSpec(name=self.id, description=self.description, parameters=self.params.model_json_schema())
            self.__dict__["_spec"] = cached
        return cached

    def spec_for(self, agent: AgentInfo, agents: AgentRegistry) -> ToolSpec:
        """What `agent` is told about the tool. Most tools tell every agent the same; one that lists what the
        caller may use (task: its subagents) overrides this."""
        return self.spec()

    async def execute(self, params: P, ctx: ToolContext) -> ToolResult:
        raise NotImplementedError

    async def run(self, raw_input: Any, ctx: ToolContext) -> ToolResult:
        """Validate `raw_input`, execute, and bound the output.

        Raises:
            ToolError: the input does not match the schema (the message names each wrong field), or the
                tool failed; either way the model reads the message as the result.
        """
        try:
            params = self.params.model_validate(raw_input)
        except ValidationError as exc:
            raise ToolError(invalid_arguments(self.id, exc)) from None
        result = await self.execute(params, ctx)  # type: ignore[arg-type]
        if "truncated" in result.metadata:
            return result
        return truncate(result, ctx)


def invalid_arguments(tool_id: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "(the input)"
        problems.append(f"- {where}: {error['msg']}")
    return (f"The {tool_id} tool was called with invalid arguments:\n" + "\n".join(problems)
            + "\nRewrite the input so that it matches the tool's schema, then call it again.")


def truncate(result: ToolResult, ctx: ToolContext, keep: Literal["head", "tail"] = "head") -> ToolResult:
    """`result` with its output bounded; the whole output is saved and the text says where."""
    output = result.output
    if len(split_lines(output)) <= MAX_OUTPUT_LINES and len(output.encode()) <= MAX_OUTPUT_BYTES:
        return result
    path = save_output(ctx, output)
    shown, cut = bounded(output, keep)
    text = (shown + cut_note(cut, path)) if keep == "head" else (cut_note(cut, path).strip() + "\n\n" + shown)
    return ToolResult(result.title, text, {**result.metadata, "truncated": True, "output_path": str(path)},
                      result.attachments)


def bounded(text: str, keep: Literal["head", "tail"] = "head") -> tuple[str, int]:
    """The first (or last) lines of `text` within both bounds, and how many lines were left out.

    A single line longer than the byte bound is cut inside the line, so something is always shown.
    """
    lines = split_lines(text)
    ordered = lines if keep == "head" else lines[::-1]
    kept: list[str] = []
    size = 0
    for line in ordered[:MAX_OUTPUT_LINES]:
        size += len(line.encode()) + 1
        if size > MAX_OUTPUT_BYTES:
            if not kept:
                raw = line.encode()
                piece = raw[:MAX_OUTPUT_BYTES] if keep == "head" else raw[-MAX_OUTPUT_BYTES:]
                kept.append(piece.decode(errors="ignore") + " …(line cut)" if keep == "head"
                            else "(line cut)… " + piece.decode(errors="ignore"))
            break
        kept.append(line)
    shown = kept if keep == "head" else kept[::-1]
    return "\n".join(shown), len(lines) - len(shown)


def split_lines(text: str) -> list[str]:
    """Lines as a person counts them: a final newline does not start another line."""
    lines = text.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    return lines


def save_output(ctx: ToolContext, text: str) -> Path:
    folder = ctx.data_dir / OUTPUT_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ids.ascending("tool")
    path.write_text(text, encoding="utf-8")
    return path


def cut_note(cut_lines: int, path: Path) -> str:
    what = f"{cut_lines} more line{'s' if cut_lines != 1 else ''}" if cut_lines else "the rest of a very long line"
    return (f"\n\n(Output truncated: {what} not shown. The full output is saved in {path}. Read it in pieces "
            "with the read tool (offset and limit), or search it with grep, rather than reading it all.)")


@cache
def _description(module: str, tool_id: str) -> str:
    package = module.rpartition(".")[0]
    return files(package).joinpath(f"{tool_id}.txt").read_text(encoding="utf-8").strip()


def resolve_path(ctx: ToolContext, raw: str) -> Path:
    """The absolute path the model meant, with `~`, `..` and symlinks resolved."""
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = ctx.directory / path
    return path.resolve()


def workspace_root(ctx: ToolContext) -> Path:
    return ctx.directory.resolve()


def inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def relative(ctx: ToolContext, path: Path) -> str:
    """A path as permission patterns and titles show it: relative inside the workspace, else absolute."""
    root = workspace_root(ctx)
    if path == root:
        return "."
    return path.relative_to(root).as_posix() if inside(path, root) else path.as_posix()


def folder_pattern(folder: Path) -> str:
    """`<folder>/*`, the pattern an `external_directory` rule or grant matches."""
    text = folder.as_posix().rstrip("/")
    return f"{text}/*"


async def ask_external(ctx: ToolContext, path: Path, *, is_dir: bool | None = None) -> None:
    """A path outside the workspace also needs `external_directory` for its folder (the path itself if a dir)."""
    if inside(path, workspace_root(ctx)):
        return
    folder = path if (path.is_dir() if is_dir is None else is_dir) else path.parent
    pattern = folder_pattern(folder)
    await ctx.ask("external_directory", [pattern], always=[pattern],
                  metadata={"path": str(path), "directory": str(folder)})


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
