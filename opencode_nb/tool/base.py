"""What a tool is, what it gets to work with, and what it gives back.

A tool is a pydantic parameter model, a description written for the model (`<id>.txt` beside the tool's
module) and `execute(params, ctx)`. `Tool.run` is the one entry the loop uses:

    result = await tool.run(raw_input, ctx)     # ToolResult(title, output, metadata, attachments)

It validates the raw input (an invalid call becomes a `ToolError` naming the field to fix, which the
model reads as the result; so do arguments no tool can use, see `argument_problem`) and bounds the
output: past `MAX_OUTPUT_LINES` lines or `MAX_OUTPUT_BYTES` bytes the text is cut, the whole of it is
saved under `data_dir/tool-output/`, and the cut text says how to read the rest. A tool that bounds its
own output (read pages by lines, bash keeps the tail) says so by setting `metadata["truncated"]` (True or
False) and is left alone.

A result has two readers. The output is the model's: what happened and what to do next ("call it again",
"the person can undo…"). The person reads the `summary` each tool puts in its metadata (`for_person`), and
the card shows what the call printed, changed or answered (`person_text`), never the output's sentences for
the model. A failure does the same through `ToolError(message, summary=...)`.

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
import os
import re
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from .. import fs, secrets
from .. import id as ids
from ..errors import ToolError
from ..provider.request import ToolSpec
from ..values import Attachment
from .context import Ask, TodoStore, ToolContext, Update

if TYPE_CHECKING:
    from ..agent.info import AgentInfo
    from ..agent.registry import AgentRegistry

__all__ = ["MAX_ARGUMENT_CHARS", "MAX_ARGUMENT_DEPTH", "MAX_OUTPUT_BYTES", "MAX_OUTPUT_LINES", "Ask", "TodoStore",
           "Tool", "ToolContext", "ToolResult", "Update", "argument_problem", "storable_arguments", "well_formed"]

MAX_OUTPUT_LINES = 2000
MAX_OUTPUT_BYTES = 50 * 1024
"""Outputs beyond either bound are cut; the whole text is kept in a file the model can read in pieces."""

MAX_ARGUMENT_DEPTH = 64
"""Levels of arrays and objects a call's arguments may nest. Real schemas use fewer than five; input nested
thousands deep would only exhaust the recursion of the code that validates, stores and echoes it."""

MAX_ARGUMENT_CHARS = 1_000_000
"""Characters of text in one call's arguments, keys and strings together: more than any model writes in one
response, and far beyond any command, pattern or path (Linux refuses a single argument past 128 KiB)."""

ECHO_CHARS = 2000
"""How much of each string of a refused call is kept in its stored input, which the model is shown again."""

OUTPUT_FOLDER = "tool-output"
"""Under `ctx.data_dir`; agents' default rules let them read it even though it is outside the workspace."""

P = TypeVar("P", bound=BaseModel)

ToolKind = Literal["builtin", "mcp", "function"]
"""Where a tool comes from: shipped with the package, offered by an MCP server, or a person's function. Code
that treats tools by origin reads `Tool.kind`; `tool/` cannot import the MCP layer above it to ask."""

@dataclass(frozen=True)
class ToolResult:
    title: str
    """One line for the tool card: the path, the pattern, the command's description."""
    output: str
    """What the model reads."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """What views show besides the output (a diff, an exit code); the model never sees it. What the person
    reads of the result is here too (see `for_person`): `summary`, and `person_output` where the output is
    written for the model."""
    attachments: list[Attachment] = field(default_factory=list)


def for_person(summary: str, person_output: str | None = None, *, markdown: bool = False) -> dict[str, Any]:
    """The metadata entries that say what a person reads of a result, beside the output the model reads.

    Args:
        summary: what happened, in a line or a few, worded for the person ("Created notes.md, 12 lines").
        person_output: what the card shows under the summary in place of the output, when the output holds
            sentences for the model (what to do next, where it ran); "" shows nothing more. None: the output
            itself is what a person reads (a file's lines, a listing).
        markdown: the shown text is markdown (a subagent's answer, a fetched page, a plan) and renders as such.
    """
    entries: dict[str, Any] = {"summary": summary}
    if person_output is not None:
        entries["person_output"] = person_output
    if markdown:
        entries["markdown"] = True
    return entries


def person_text(output: str, metadata: dict[str, Any]) -> str:
    """What a card shows of a completed call's output: `person_output` when the tool gave one, else the
    output without the note `truncate` added for the model (the person is told where the whole is)."""
    shown = metadata.get("person_output")
    if isinstance(shown, str):
        return shown
    path = metadata.get("output_path")
    if not isinstance(path, str):
        return output
    head, sep, _ = output.rpartition(CUT_NOTE_START)
    if sep:
        return f"{head}\n… cut here; the whole output is saved in {path}"
    if output.startswith(CUT_NOTE_START.lstrip()):
        _, _, tail = output.partition("\n\n")
        return f"… the beginning is cut; the whole output is saved in {path}\n{tail}"
    return output


class Tool(Generic[P]):
    """A tool the model can call. Subclasses set `id` and `params` and write `execute`."""

    id: ClassVar[str]
    """The name the model sees; the description is `<id>.txt` beside the module."""
    params: ClassVar[type[BaseModel]]
    kind: ClassVar[ToolKind] = "builtin"

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
        problem = argument_problem(raw_input)
        if problem is not None:
            raise ToolError(unusable_arguments(self.id, problem), summary=f"Not run: its arguments {problem}")
        try:
            params = self.params.model_validate(raw_input)
        except ValidationError as exc:
            raise ToolError(invalid_arguments(self.id, exc), summary=invalid_summary(exc)) from None
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


def invalid_summary(exc: ValidationError) -> str:
    """An invalid call for the person: which arguments were wrong (the model was told to call again)."""
    fields = sorted({".".join(str(p) for p in error["loc"]) or "the input" for error in exc.errors()})
    return "Not run: the agent's call had invalid arguments (" + ", ".join(fields[:5]) + ")"


_UNPAIRED = re.compile("[\ud800-\udfff]")
"""Half of a UTF-16 surrogate pair. A decoded pair is one character, so a Python string holds halves only
when something went wrong (a server splitting an emoji's `\\ud83d\\ude00` escape across two chunks), and
UTF-8 cannot encode them: SQLite, the SDKs and the Jupyter front end would all fail on them."""


def well_formed(text: str) -> str:
    """`text` with split surrogate pairs joined into their character and lone halves replaced by U+FFFD."""
    if _UNPAIRED.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def argument_problem(arguments: Any) -> str | None:
    """Why no tool could use these arguments, whatever its schema; None when nothing is wrong.

    NUL characters and unpaired surrogates are not text any file name, command or pattern can hold; input
    nested past `MAX_ARGUMENT_DEPTH` or larger than `MAX_ARGUMENT_CHARS` is not something a model means to
    send. The walk is iterative, so arguments nested deeper than Python's recursion limit are measured too.
    """
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(arguments, ())]
    total = 0
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_ARGUMENT_DEPTH:
            return (f"they are nested more than {MAX_ARGUMENT_DEPTH} levels deep (at {_where(path[:8])}…); "
                    "no tool takes input shaped like that")
        if isinstance(value, str):
            total += len(value)
            problem = _text_problem(value)
            if problem:
                return f"{_where(path)} {problem}"
        elif isinstance(value, dict):
            for key, item in value.items():
                key = str(key)
                total += len(key)
                problem = _text_problem(key)
                if problem:
                    return f"the key {_shown(key)} {problem}"
                stack.append((item, (*path, key)))
        elif isinstance(value, list):
            stack.extend((item, (*path, i)) for i, item in enumerate(value))
        if total > MAX_ARGUMENT_CHARS:
            return (f"they hold more than {MAX_ARGUMENT_CHARS:,} characters of text; no tool takes that much in one "
                    "call: split the work, or write large content to a file in several steps")
    return None


def unusable_arguments(tool_id: str, problem: str) -> str:
    """What the model reads when `argument_problem` refused its call."""
    return (f"The {tool_id} tool was not run: its arguments cannot be used because {problem}. "
            "Call it again with plain text arguments that match its schema.")


def storable_arguments(arguments: Any) -> dict[str, Any]:
    """A refused call's arguments in a form safe to store and to show the model again.

    Unpaired surrogates and NULs become U+FFFD, strings are cut to `ECHO_CHARS`, lists and objects to 100
    entries and nesting to `MAX_ARGUMENT_DEPTH`: a refused 3 MB command must not ride along in every later
    request, and the provider must accept the echo of the call.
    """
    cleaned = _storable(arguments, 0)
    return cleaned if isinstance(cleaned, dict) else {}


def _storable(value: Any, depth: int) -> Any:
    if isinstance(value, str):
        text = well_formed(value).replace("\0", "\ufffd")
        return text if len(text) <= ECHO_CHARS else f"{text[:ECHO_CHARS]}…[{len(text) - ECHO_CHARS:,} more characters]"
    if depth >= MAX_ARGUMENT_DEPTH and isinstance(value, dict | list):
        return "…[nested too deep]"
    if isinstance(value, dict):
        return {_storable(str(k), depth): _storable(v, depth + 1) for k, v in islice(value.items(), 100)}
    if isinstance(value, list):
        return [_storable(v, depth + 1) for v in islice(value, 100)]
    return value


def _text_problem(text: str) -> str | None:
    if "\0" in text:
        return "contains a NUL character (\\u0000)"
    bad = _UNPAIRED.search(text)
    if bad:
        return (f"contains an unpaired surrogate (\\u{ord(bad.group()):04x}), half of a character that is not "
                "text on its own")
    return None


def _where(path: tuple[str | int, ...]) -> str:
    if not path:
        return "the input"
    shown = "".join(f"[{p}]" if isinstance(p, int) else f".{_UNPAIRED.sub('?', p)}" for p in path).lstrip(".")
    return f"`{shown}`"


def _shown(text: str) -> str:
    return repr(_UNPAIRED.sub("?", text.replace("\0", "?"))[:80])


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
    """The whole output at a fresh name in the tool-output folder, which sandboxed commands may change: made
    by `fs.write_file`, so a link planted there is replaced, never written through."""
    folder = ctx.data_dir / OUTPUT_FOLDER
    name = ids.ascending("tool")
    # Redacted as everything else written: see secrets.py.
    fs.write_file(folder, name, secrets.redact(text).encode("utf-8"), mode=0o600, replace_kind=True)
    return folder / name


CUT_NOTE_START = "\n\n(Output truncated: "
"""How the note a cut output ends with begins, so views can leave the model's instructions out."""


def cut_note(cut_lines: int, path: Path) -> str:
    what = f"{cut_lines} more line{'s' if cut_lines != 1 else ''}" if cut_lines else "the rest of a very long line"
    return (f"{CUT_NOTE_START}{what} not shown. The full output is saved in {path}. Read it in pieces "
            "with the read tool (offset and limit), or search it with grep, rather than reading it all.)")


@cache
def _description(module: str, tool_id: str) -> str:
    package = module.rpartition(".")[0]
    return files(package).joinpath(f"{tool_id}.txt").read_text(encoding="utf-8").strip()


def workspace_root(ctx: ToolContext) -> Path:
    """The project's root: the bounds of "inside", and what permission patterns are relative to."""
    return (ctx.root or ctx.directory).resolve()


def working_folder(ctx: ToolContext) -> Path:
    """Where relative paths and commands start: the folder the person works in (a notebook's)."""
    return ctx.directory.resolve()


def inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def relative(ctx: ToolContext, path: Path) -> str:
    """A path as permission patterns name it: relative to the project root inside the project, else absolute."""
    root = workspace_root(ctx)
    if path == root:
        return "."
    return path.relative_to(root).as_posix() if inside(path, root) else path.as_posix()


def shown(ctx: ToolContext, path: Path) -> str:
    """A path as the model and the person read it: relative to the working folder inside the project (`notes.md`,
    `../src/x.py`), so that it can be given back as it is; absolute outside the project."""
    if not inside(path, workspace_root(ctx)):
        return path.as_posix()
    return Path(os.path.relpath(path, working_folder(ctx))).as_posix()


def folder_pattern(folder: Path) -> str:
    """`<folder>/*`, the pattern an `external_directory` rule or grant matches."""
    text = folder.as_posix().rstrip("/")
    return f"{text}/*"


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
