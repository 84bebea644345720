"""An MCP server's tool as one of ours: `<server>_<tool>`, under the permission engine like any other.

The name is what rules match (`github_*: ask`, `db_query: allow`) and what the model calls; it is made of the
characters every provider accepts in a tool name and cut to 64. A name that would be a built-in permission's
(`external` + `directory`) gets `mcp_` in front, or "always" on it would grant ours (`tool/reserved.py`). A name
another configured server's tool could also have (`could_collide`) ends with a digest of its server and tool
names (`distinct_name`), so a grant stays with the one tool it was given to whatever order servers start in.
Rules decide as for built-in tools, with one difference: a catch-all `"*": allow` (the build agent's default)
does not allow a server's tool. That rule was written for tools we ship and know; a server's tools are somebody
else's code, so unless a rule naming them (or a person's "always") allows them, a call asks. A deny, catch-all
or not, keeps the tool from the model.

The arguments go to the server as the model wrote them: the server's schema is the one that counts, and its
complaint comes back as the result. What comes back: text as text; images as attachments the model sees where
its provider takes images in tool results (the card shows them either way); embedded text resources inline,
binary ones described; resource links listed; `structuredContent` kept in the metadata, and used as the text
when the server sent nothing else. A result the server marks as an error is a tool error the model reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

import mcp_types as types

from ..errors import ToolError
from ..permission.rules import evaluate
from ..provider.request import ToolSpec
from ..sandbox.protected import undo_note
from ..sandbox.treatment import SandboxedProcess
from ..tool.base import Tool, ToolContext, ToolResult, argument_problem, truncate, unusable_arguments
from ..tool.reserved import PREFIX, is_reserved, why_reserved
from ..values import Attachment
from .client import CallFailed, ServerClient

MAX_NAME = 64
"""Anthropic and OpenAI both take at most 64 characters of `[A-Za-z0-9_-]`."""
MAX_DESCRIPTION = 4000
MAX_SHOWN = 4000
"""Characters of the arguments a permission prompt shows."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`<server>_<tool>` in the characters providers accept, at most `MAX_NAME` long; `mcp_` in front of a name
    that is a built-in permission's (`tool/reserved.py`: `external` + `directory` is `mcp_external_directory`)."""
    name = plain_name(server, tool)
    return (PREFIX + name)[:MAX_NAME] if is_reserved(name) else name


def plain_name(server: str, tool: str) -> str:
    return _UNSAFE.sub("_", f"{server}_{tool}")[:MAX_NAME]


DIGEST = 8
"""Hex digits of the digest a name that another server's tool could also have ends with."""


def distinct_name(server: str, tool: str) -> str:
    """`tool_name` with `_<digest of server and tool>` at its end (cut to fit 64): the same two names give the
    same name on every start, and no other server's tool can give it."""
    import hashlib

    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:DIGEST]
    return f"{tool_name(server, tool)[:MAX_NAME - DIGEST - 1]}_{digest}"


def could_collide(server: str, tool: str, others: Iterable[str]) -> bool:
    """Whether a server among `others` (the other configured servers, running or not) could offer a tool under
    the same name: `<server>_<tool>` joins with `_`, which names may hold, and `mcp_` comes in front of a reserved
    one, so `mcp` + `external_directory` and `external` + `directory` are both `mcp_external_directory`, and
    `a_b` + `c` and `a` + `b_c` both `a_b_c`. Judged from the configuration alone, never from which server
    listed its tools first: an "always" given to one server's tool must name that tool on every start, and the
    other's must never take that name, whichever runs or starts first. Two tools of the same server that
    sanitise to one name are `ServerSet`'s to see."""
    name = tool_name(server, tool).casefold()
    for other in others:
        if other == server:
            continue
        start = _UNSAFE.sub("_", other).casefold() + "_"
        if name.startswith(start) or name.startswith(PREFIX + start):
            return True
    return False


def renamed_note(server: str, tool: str, tool_id: str) -> str | None:
    """What the person is told when the server's tool got another name than `<server>_<tool>`."""
    name = plain_name(server, tool)
    if not is_reserved(name):
        return None
    return (f"MCP server {server}: its tool {tool} is offered as {tool_id}, not {name}: {why_reserved(name)}. "
            f"Rules and \"always\" for it name {tool_id}.")


class McpTool(Tool[Any]):
    """One tool of one server; `client` is looked up at call time, so a restarted server is the one called."""

    params = dict  # type: ignore[assignment]  # the server validates; see `run`
    kind = "mcp"

    def __init__(self, tool_id: str, server: str, tool: types.Tool, client: Callable[[], ServerClient],
                 process: Callable[[], SandboxedProcess | None] = lambda: None) -> None:
        self.id = tool_id  # type: ignore[misc]
        self.server = server
        self.tool = tool
        self.client = client
        self.process = process
        """A local server's process as it runs now: checked at each call's end, and its result redacted."""

    @property
    def description(self) -> str:
        text = (self.tool.description or self.tool.title or self.tool.name).strip()
        if len(text) > MAX_DESCRIPTION:
            text = text[:MAX_DESCRIPTION] + "…"
        return f"{text}\n\n(Tool `{self.tool.name}` of the MCP server `{self.server}`.)"

    def spec(self) -> ToolSpec:
        schema = dict(self.tool.input_schema or {})
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        return ToolSpec(name=self.id, description=self.description, parameters=schema)

    async def run(self, raw_input: Any, ctx: ToolContext) -> ToolResult:
        problem = argument_problem(raw_input)
        if problem is not None:
            raise ToolError(unusable_arguments(self.id, problem))
        arguments = raw_input if raw_input is not None else {}
        if not isinstance(arguments, dict):
            raise ToolError(f"The {self.id} tool takes an object of named arguments, not {type(arguments).__name__}. "
                            "Call it again with arguments that match its schema.")
        return truncate(await self.execute(arguments, ctx), ctx)

    async def execute(self, params: dict[str, Any], ctx: ToolContext) -> ToolResult:
        shown = json.dumps(params, ensure_ascii=False, indent=2, default=str)
        await ctx.ask(self.id, ["*"], always=["*"], always_ask=_only_catch_all(self.id, ctx),
                      metadata={"server": self.server, "tool": self.tool.name, "arguments": params,
                                "where": f"MCP server {self.server}, tool {self.tool.name}, with the arguments:",
                                "command": shown if len(shown) <= MAX_SHOWN else shown[:MAX_SHOWN] + "\n…"})
        title = f"{self.server} · {self.tool.name}"
        ctx.update(title, {"server": self.server, "tool": self.tool.name, "arguments": params})
        client = self.client()
        client.asking = ctx.ask
        try:
            result = await client.call(self.tool.name, params)
        except CallFailed as exc:
            raise ToolError(str(exc) + self._after_call()) from None
        finally:
            client.asking = None
        try:
            made = as_result(title, self.server, self.tool.name, result)
        except ToolError as exc:  # the server's error, and what the sandbox saw meanwhile (`failure.CallNotes`)
            raise ToolError(self._redacted(str(exc) + client.call_notes()) + self._after_call()) from None
        return replace(made, output=self._redacted(made.output) + self._after_call())

    def _redacted(self, text: str) -> str:
        process = self.process()
        return process.redact(text) if process is not None else text

    def _after_call(self) -> str:
        """What the server made at protected paths since the last call's end, moved away now; said to the model."""
        process = self.process()
        if process is None:
            return ""
        process.check()
        undone = process.untold()
        return undo_note(undone, f"The MCP server {self.server}") if undone else ""


def _only_catch_all(permission: str, ctx: ToolContext) -> bool:
    """Whether the rules allow this tool only through a rule for every permission (see the module's docstring)."""
    if ctx.rules is None:
        return False
    deciding = evaluate(permission, "*", ctx.rules(permission))
    return deciding.action == "allow" and deciding.permission == "*"


def as_result(title: str, server: str, tool: str, result: types.CallToolResult) -> ToolResult:
    texts: list[str] = []
    images: list[Attachment] = []
    for block in result.content:
        texts += _block(block, images)
    structured = result.structured_content
    text = "\n\n".join(t for t in texts if t)
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False, indent=1)
    if result.is_error:
        raise ToolError(f"The MCP server {server} reported an error from {tool}: {text or '(no message)'}")
    metadata: dict[str, Any] = {"server": server, "tool": tool}
    if structured is not None:
        metadata["structured"] = structured
    return ToolResult(title, text or "(the tool returned nothing)", metadata, images)


def _block(block: Any, images: list[Attachment]) -> list[str]:
    if isinstance(block, types.TextContent):
        return [block.text]
    if isinstance(block, types.ImageContent):
        images.append(Attachment(mime=block.mime_type, url=f"data:{block.mime_type};base64,{block.data}"))
        return [f"[image {len(images)}: {block.mime_type}, attached]"]
    if isinstance(block, types.AudioContent):
        return [f"[audio ({block.mime_type}) returned; it cannot be shown here]"]
    if isinstance(block, types.ResourceLink):
        about = f" ({block.description})" if block.description else ""
        return [f"[resource link: {block.name} {block.uri}{about}]"]
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return [f"[resource {resource.uri}]\n{resource.text}"]
        mime = resource.mime_type or "application/octet-stream"
        if mime.startswith("image/"):
            images.append(Attachment(mime=mime, url=f"data:{mime};base64,{resource.blob}", filename=str(resource.uri)))
            return [f"[image {len(images)}: {resource.uri}, attached]"]
        return [f"[binary resource {resource.uri} ({mime}, about {len(resource.blob) * 3 // 4:,} bytes); "
                "not shown]"]
    return [f"[a {getattr(block, 'type', type(block).__name__)} block this client does not show]"]


def rule_in_force(tool_id: str, rules: Any) -> str:
    """What a call of `tool_id` meets under `rules` (an agent's ruleset), as `%agent mcp` shows it."""
    deciding = evaluate(tool_id, "*", rules)
    if deciding.action == "allow" and deciding.permission == "*":
        return 'ask (a catch-all "*": allow does not reach MCP tools)'
    if deciding.permission == "*" and deciding.pattern == "*" and deciding.action == "ask":
        return "ask"
    return f"{deciding.action} ({deciding.permission}: {deciding.action})"
