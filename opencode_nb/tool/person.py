"""The person's own functions as tools: the `FunctionTool` that offers one to the agents (`@tool` marks it).

    from opencode_nb import tool

    @tool
    def query(sql: str, limit: int = 20) -> pd.DataFrame:
        '''Run a read-only SQL query on the sales database.

        Args:
            sql: one SELECT statement.
            limit: at most this many rows.
        '''

What the model is told comes from the function itself. The name is the tool's name (sanitised as MCP tool names
are: `[A-Za-z0-9_-]`, at most 64 characters; a built-in permission's name, such as `external_directory`, is
refused, `reserved.py` says why); the docstring's first paragraph is the description, its `Args:`
(Google) or `Parameters` (NumPy) section describes each parameter, its `Returns` section is added to the
description; the type hints become the JSON schema. Parameters without a hint take any JSON value; parameters
with a default are optional, and a call that leaves them out gets the function's own default; `*args` and
`**kwargs` are not offered (the model can pass only named parameters, and an unknown name is refused). A hint
with no JSON form (a DataFrame, a connection) is refused when the function is made a tool, naming the parameter.

Arguments are validated by pydantic before the function runs, in its lax mode: `"3"` becomes `3` for an `int`,
a dict becomes a model or a TypedDict. A call that does not fit is a tool error naming each wrong argument,
what it should be and what the model sent; the function is not called and the model can try again.

A call asks first. Its permission is the tool's name and its pattern is the name too, so `permission: {query:
allow}` lets it run and `{query: deny}` keeps it from the model; nothing said means `ask`, and the prompt shows
the call as Python (`query(sql='SELECT …')`). As for MCP tools, a catch-all `"*": allow` (the build agent's
default) does not allow it: that rule was written for the tools we ship, and a person's function can do
anything their kernel can. Only a rule that names it, or an "always" given at its prompt, does. An agent whose
rules deny everything not named (data-explorer, which must not change the person's kernel) is therefore not
offered the person's tools unless a rule names them.

Where the function runs is up to whoever registers the tool (`Caller`): in a kernel it runs live, in the
person's namespace, with what it prints, displays and returns captured and formatted as the `python` tool's
results are (`kernel/python/calls.py`). Outside a kernel (`ws.tools.add(function)`), `call_plainly` calls it in
the script's process: a plain function on a worker thread, an async one on the running loop; what it prints
goes to the script's own output and its value is given as its `repr`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import time
import traceback
import typing
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, TypeAdapter, ValidationError, create_model
from pydantic.json_schema import PydanticJsonSchemaWarning

from ..errors import ToolError
from ..permission.rules import evaluate
from ..provider.request import ToolSpec
from ..values import Attachment, CodeError, CodeRun
from .base import Tool, ToolContext, ToolResult, argument_problem, for_person, truncate, unusable_arguments
from .python import model_text
from .reserved import refuse_reserved
from .support.docstrings import parameter_docs, sections
from .support.run_summary import run_shown, run_summary
from .support.stream import PREVIEW_CHARS, OutputStream

MARK = "__opencode_nb_tool__"
"""The attribute `@tool` sets on a function; a kernel finds its tools by it in the person's namespace."""
MAX_NAME = 64
"""Providers take at most 64 characters of `[A-Za-z0-9_-]` as a tool name (as for MCP tools)."""
DEFAULT_TIMEOUT_S = 60.0
"""How long a call may run before it is stopped, unless `@tool(timeout=...)` says otherwise."""
MAX_SHOWN = 4000
"""Characters of a call the permission prompt shows."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_QUALIFIED = re.compile(r"\b(?:[a-z_]\w*\.)+([A-Z]\w*)")

class Caller(Protocol):
    """Runs the function with the validated arguments and says what it printed, showed, returned or raised."""

    def __call__(self, function: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], *, timeout_s: float,
                 on_output: Callable[[str], None]) -> Awaitable[CodeRun]: ...


@dataclass(frozen=True)
class ToolOptions:
    """What `@tool(...)` was given; None: taken from the function."""

    name: str | None = None
    description: str | None = None
    timeout_s: float | None = None


def tool_name(name: str) -> str:
    """`name` in the characters providers accept in a tool name, at most `MAX_NAME` long."""
    cleaned = _UNSAFE.sub("_", name)[:MAX_NAME]
    if not cleaned.strip("_"):
        raise ValueError(f"{name!r} cannot name a tool: give @tool(name=...) with letters, digits, _ or -")
    return cleaned


# ------------------------------------------------------------------------------------------ arguments


@dataclass(frozen=True)
class Arguments:
    """How a function's parameters meet the model: the schema it is shown, and the validation of its calls."""

    model: type[BaseModel]
    schema: dict[str, Any]
    positional: tuple[str, ...]
    """Positional-only parameters, passed by position in this order."""
    left_out: tuple[str, ...]
    """`*args` and `**kwargs`, which the model cannot pass."""

    def validate(self, raw: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """The call's positional and keyword arguments; parameters the model left out keep the function's
        defaults (the very objects, not copies).

        Raises:
            ValidationError: an argument does not fit its hint, one is missing, or an unknown one was sent.
        """
        checked = self.model.model_validate(raw)
        given = {field.alias or name: getattr(checked, name) for name, field in self.model.model_fields.items()
                 if name in checked.model_fields_set}  # in the signature's order
        args = []
        for name in self.positional:
            if name not in given:
                break
            args.append(given.pop(name))
        return args, given


def arguments_of(function: Callable[..., Any], tool_id: str) -> Arguments:
    """Build the validation model and the JSON schema of `function`'s parameters.

    Raises:
        TypeError: a hint cannot be resolved, or has no JSON form (names the parameter and the hint).
    """
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception as exc:
        raise TypeError(f"@tool: the type hints of {function.__name__} cannot be resolved ({exc}); define what they "
                        "name before the function") from None
    described = parameter_docs(inspect.getdoc(function) or "")
    fields: dict[str, Any] = {}
    positional: list[str] = []
    left_out: list[str] = []
    for i, (name, parameter) in enumerate(signature.parameters.items()):
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            left_out.append(name)
            continue
        if parameter.kind == parameter.POSITIONAL_ONLY:
            positional.append(name)
        hint = hints.get(name, Any)
        _check_hint(function.__name__, name, hint)
        default = ... if parameter.default is parameter.empty else parameter.default
        # Fields get neutral names and the parameter's name as alias: a parameter may be called `json` or
        # `model_config`, which a model's attribute may not.
        fields[f"p{i}"] = (hint, Field(default, alias=name, description=described.get(name)))
    model = create_model(f"{tool_id}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PydanticJsonSchemaWarning)  # a default with no JSON form is left out
        schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return Arguments(model, schema, tuple(positional), tuple(left_out))


def _check_hint(function: str, name: str, hint: Any) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
            TypeAdapter(hint).json_schema()
    except (PydanticUserError, TypeError, ValueError) as exc:  # PydanticSchemaGenerationError is a user error
        shown = getattr(hint, "__name__", None) or repr(hint)
        raise TypeError(
            f"@tool: parameter `{name}` of {function} is annotated {shown}, which a model cannot send as JSON "
            f"({type(exc).__name__}). Take JSON values (str, int, float, bool, list, dict, Literal, a pydantic "
            "model or TypedDict) and look the object up inside the function.") from None


def describe(function: Callable[..., Any], tool_id: str, given: str | None) -> str:
    """The description the model reads: the docstring's first paragraph (or `given`), what it returns, and
    that the function is the person's, running in their kernel."""
    first, found = sections(inspect.getdoc(function) or "")
    text = (given or first).strip()
    returns = " ".join(line.strip() for line in found.get("Returns", found.get("Return", []))).strip()
    if returns and not given:
        text += f"\n\nReturns: {returns}"
    shown = signature_text(function)
    note = (f"(A Python function the person defined in their notebook, `{shown}`; it runs in their live kernel, "
            "and what it prints and returns is the result.)")
    return f"{text}\n\n{note}" if text else note


def signature_text(function: Callable[..., Any]) -> str:
    """`query(sql: str, limit: int = 20) -> DataFrame`: hints as written, without their modules' paths."""
    try:
        try:
            signature = inspect.signature(function, eval_str=True)
        except Exception:  # a hint naming something undefined: shown as written
            signature = inspect.signature(function)
        text = _QUALIFIED.sub(r"\1", str(signature))  # pandas.core.frame.DataFrame -> DataFrame
    except (TypeError, ValueError):
        text = "(...)"
    return f"{getattr(function, '__name__', '?')}{text}"


# ------------------------------------------------------------------------------------------ the tool


@dataclass(frozen=True)
class Call:
    """A validated call: what the function is given, and the arguments as the model wrote them (stored, shown)."""

    args: list[Any]
    kwargs: dict[str, Any]
    raw: dict[str, Any]


class FunctionTool(Tool[Any]):
    """A person's function as a tool. `caller` runs it (live in a kernel; see `Caller`); `gone` says why the
    function can no longer be called (deleted from the namespace), or None while it is there."""

    params = dict  # type: ignore[assignment]  # validated by `arguments`, built from the signature
    kind = "function"

    def __init__(self, function: Callable[..., Any], *, name: str | None = None, description: str | None = None,
                 timeout_s: float | None = None, caller: Caller | None = None,
                 gone: Callable[[], str | None] | None = None) -> None:
        self.function = function
        self.id = tool_name(name or function.__name__)  # type: ignore[misc]
        refuse_reserved(self.id)
        self.arguments = arguments_of(function, self.id)
        self._description = describe(function, self.id, description)
        self.timeout_s = timeout_s or DEFAULT_TIMEOUT_S
        self.caller: Caller = caller or call_plainly
        self.gone = gone

    @classmethod
    def marked(cls, function: Callable[..., Any], *, name: str | None = None, description: str | None = None,
               timeout_s: float | None = None, **kwargs: Any) -> FunctionTool:
        """The tool `@tool` asked for, with its options (plain defaults for an unmarked function); the
        arguments given here win over them."""
        options: ToolOptions = getattr(function, MARK, None) or ToolOptions()
        return cls(function, name=name or options.name, description=description or options.description,
                   timeout_s=timeout_s or options.timeout_s, **kwargs)

    @property
    def description(self) -> str:
        return self._description

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.id, description=self.description, parameters=self.arguments.schema)

    def signature(self) -> str:
        """`query(sql: str, limit: int = 20) -> DataFrame`, as listings show it."""
        return signature_text(self.function)

    async def run(self, raw_input: Any, ctx: ToolContext) -> ToolResult:
        problem = argument_problem(raw_input)
        if problem is not None:
            raise ToolError(unusable_arguments(self.id, problem), summary=f"Not run: its arguments {problem}")
        raw = raw_input if raw_input is not None else {}
        if not isinstance(raw, dict):
            raise ToolError(f"The {self.id} tool takes an object of named arguments, not {type(raw).__name__}. "
                            "Call it again with arguments that match its schema.")
        why_gone = self.gone() if self.gone is not None else None
        if why_gone:
            raise ToolError(f"The {self.id} tool is gone: {why_gone}. Do without it.",
                            summary=f"Not run: {why_gone}")
        try:
            args, kwargs = self.arguments.validate(raw)
        except ValidationError as exc:
            raise ToolError(invalid_call(self.id, exc, self.arguments), summary=invalid_call_summary(exc)) from None
        result = await self.execute(Call(args, kwargs, raw), ctx)
        return result if "truncated" in result.metadata else truncate(result, ctx)

    async def execute(self, params: Call, ctx: ToolContext) -> ToolResult:
        args, kwargs, raw = params.args, params.kwargs, params.raw
        shown = call_text(getattr(self.function, "__name__", self.id), args, kwargs)
        await ctx.ask(self.id, [self.id], always=[self.id], always_ask=only_catch_all(self.id, ctx),
                      metadata={"function": self.id, "arguments": raw,
                                "where": "Calls the person's own function, live in their kernel:",
                                "command": shown if len(shown) <= MAX_SHOWN else shown[:MAX_SHOWN] + "…"})
        arguments = shown[shown.index("(") + 1:-1]  # the card names the tool already
        title = arguments if len(arguments) <= 80 else arguments[:77] + "..."
        metadata: dict[str, Any] = {"function": self.id, "arguments": raw, "call": shown}
        ctx.update(title, metadata)
        stream = OutputStream(ctx)
        try:
            run = await self.caller(self.function, args, kwargs, timeout_s=self.timeout_s, on_output=stream.write)
        finally:
            stream.close()
        summary = {"run": run.model_dump(exclude={"output"}), "output": run.output[-PREVIEW_CHARS:]}
        said = f"Called {shown}."
        if run.error is not None:
            ctx.update(None, summary)
            raise ToolError(f"{said}\n\n{model_text(run, ctx, include_error=True)}", summary=run_summary(run))
        if run.result is None:
            said += " It returned None."
        images = [Attachment(mime="image/png", url=f"data:image/png;base64,{d['image/png']}")
                  for d in [*run.displays, *([run.result] if run.result else [])] if "image/png" in d]
        return ToolResult(title, f"{said}\n\n{model_text(run, ctx)}",
                          {**metadata, **summary, "mode": run.mode, **for_person(run_summary(run), run_shown(run))},
                          images)


def call_text(name: str, args: list[Any], kwargs: dict[str, Any]) -> str:
    """The call as Python would read it: `query(sql='SELECT 1', limit=5)`."""
    shown = [_short_repr(a) for a in args] + [f"{k}={_short_repr(v)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(shown)})"


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 1000 else text[:1000] + "…"


def only_catch_all(permission: str, ctx: ToolContext) -> bool:
    """Whether the rules allow this tool only through a rule for every permission (see the module's docstring)."""
    if ctx.rules is None:
        return False
    deciding = evaluate(permission, "*", ctx.rules(permission))
    return deciding.action == "allow" and deciding.permission == "*"


def rule_in_force(tool_id: str, rules: Any) -> str:
    """What a call of `tool_id` meets under an agent's ruleset, as `%agent tool list` shows it."""
    deciding = evaluate(tool_id, tool_id, rules)
    if deciding.action == "allow" and deciding.permission == "*":
        return 'ask (a catch-all "*": allow does not reach your functions)'
    if deciding.permission == "*" and deciding.action == "deny":
        return "not offered (this agent's rules deny what they do not name)"
    if deciding.permission == "*":
        return deciding.action
    return f"{deciding.action} ({deciding.permission}: {deciding.action})"


def invalid_call(tool_id: str, exc: ValidationError, arguments: Arguments) -> str:
    """What the model reads of a call that does not fit: per argument, what is wrong and what it sent."""
    names = list(arguments.schema.get("properties", {}))
    problems = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "(the input)"
        if error["type"] == "extra_forbidden":
            problems.append(f"- {where}: the function has no such parameter (its parameters: "
                            f"{', '.join(names) or 'none'})")
        elif error["type"] == "missing":
            problems.append(f"- {where}: required, but not given")
        else:
            sent = json.dumps(error.get("input"), ensure_ascii=False, default=repr)
            sent = sent if len(sent) <= 200 else sent[:200] + "…"
            problems.append(f"- {where}: {error['msg']}; got {sent} ({_json_type(error.get('input'))})")
    return (f"The {tool_id} tool was not called: its arguments do not fit the function's parameters.\n"
            + "\n".join(problems) + "\nCall it again with arguments that match its schema.")


SUMMARY_PROBLEMS = 3
"""Arguments a card's summary of a call that did not fit names; the model's message names them all."""


def invalid_call_summary(exc: ValidationError) -> str:
    """The person's line for a call whose arguments do not fit: per argument, what was sent and what fits."""
    said = []
    errors = exc.errors()
    for error in errors[:SUMMARY_PROBLEMS]:
        where = ".".join(str(p) for p in error["loc"]) or "the input"
        if error["type"] == "extra_forbidden":
            said.append(f"{where} was sent, but the function takes no such parameter")
        elif error["type"] == "missing":
            said.append(f"{where} is required but was not sent")
        else:
            sent = json.dumps(error.get("input"), ensure_ascii=False, default=repr)
            sent = sent if len(sent) <= 60 else sent[:60] + "…"
            wanted = str(error["msg"]).removeprefix("Input should be ").removeprefix("Value error, ")
            said.append(f"{where} was sent as {sent} ({_json_type(error.get('input'))}), but must be {wanted}")
    more = f" (and {len(errors) - SUMMARY_PROBLEMS} more)" if len(errors) > SUMMARY_PROBLEMS else ""
    return "Not called: " + "; ".join(said) + more


def _json_type(value: Any) -> str:
    for kind, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"),
                       (dict, "object")):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


async def call_plainly(function: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], *, timeout_s: float,
                       on_output: Callable[[str], None]) -> CodeRun:
    """Outside a kernel: a plain function on a worker thread, an async one awaited here; the value as its repr.

    A plain function still running at its timeout cannot be stopped from outside; the call ends with the
    timeout error and the thread finishes on its own.
    """
    started = time.perf_counter()
    value: Any = None
    error: CodeError | None = None
    try:
        async with asyncio.timeout(timeout_s):
            if inspect.iscoroutinefunction(function):
                value = await function(*args, **kwargs)
            else:
                value = await asyncio.to_thread(function, *args, **kwargs)
                if inspect.isawaitable(value):
                    value = await value
    except TimeoutError:
        error = CodeError(ename="TimeoutError", evalue=f"stopped after {timeout_s:g} s",
                          traceback=f"The call did not return within {timeout_s:g} s, its timeout.")
    except Exception as exc:
        frames = traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-8)
        error = CodeError(ename=type(exc).__name__, evalue=str(exc), traceback="".join(frames).rstrip())
    result = None
    if error is None and value is not None:
        try:
            result = {"text/plain": repr(value)}
        except Exception as exc:
            result = {"text/plain": f"<{type(value).__name__} whose repr failed: {exc}>"}
    return CodeRun(mode="live", result=result, error=error, duration_s=round(time.perf_counter() - started, 4))
