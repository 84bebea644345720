"""A person's function as a tool: what the model is told of it, how its calls are checked, and who may call it.

These run outside a kernel (`ws.tools.add(function)`, called in this process); the kernel side, where the
function runs live in the person's namespace, is in tests/kernel/test_person_tools.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

import pytest

from opencode_nb import Workspace, tool
from opencode_nb.agent import AgentRegistry
from opencode_nb.config import Config
from opencode_nb.errors import ToolError
from opencode_nb.permission import disabled, evaluate, from_config, merge
from opencode_nb.provider import Scripted
from opencode_nb.tool.person import MARK, FunctionTool, rule_in_force, tool_name
from opencode_nb.tool.support.docstrings import parameter_docs


def sales(region: str, year: int = 2024, *, top: int | None = None, verbose=False) -> list[str]:
    """Best-selling products of one region.

    Longer notes the model does not need.

    Args:
        region: the sales region, e.g. "north".
        year (int): the year to look at; defaults to
            the current one.
        top: how many products to list.

    Returns:
        product names, best first.
    """
    return [region, str(year)]


def test_the_schema_comes_from_the_hints_the_defaults_and_the_docstring():
    made = FunctionTool(sales)
    spec = made.spec()
    assert spec.name == "sales"
    assert spec.parameters == {
        "type": "object", "additionalProperties": False, "required": ["region"],
        "properties": {
            "region": {"type": "string", "description": 'the sales region, e.g. "north".'},
            "year": {"type": "integer", "default": 2024,
                     "description": "the year to look at; defaults to the current one."},
            "top": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None,
                    "description": "how many products to list."},
            "verbose": {"default": False},
        },
    }
    assert spec.description.startswith("Best-selling products of one region.\n\nReturns: product names, best first.")
    assert "Longer notes" not in spec.description
    assert "`sales(region: str, year: int = 2024, *, top: int | None = None, verbose=False) -> list[str]`" \
        in spec.description and "runs in their live kernel" in spec.description


def test_numpy_style_parameters_are_read_too():
    doc = """Add.

    Parameters
    ----------
    a : int
        the first
        addend
    b
        the second

    Returns
    -------
    int
    """
    assert parameter_docs(doc) == {"a": "the first addend", "b": "the second"}


def test_star_args_are_not_offered_and_an_unknown_argument_is_refused():
    def spread(first: str, *rest: str, **options: Any) -> str:
        return first

    made = FunctionTool(spread)
    assert list(made.spec().parameters["properties"]) == ["first"]
    assert made.arguments.left_out == ("rest", "options")
    with pytest.raises(Exception) as caught:
        made.arguments.validate({"first": "a", "second": "b"})
    assert "second" in str(caught.value)


def test_positional_only_parameters_are_passed_by_position_and_left_out_defaults_stay_the_functions_own():
    marker: list[int] = []

    def f(a: int, b: list[int] = marker, /, c: int = 3) -> None: ...

    args, kwargs = FunctionTool(f).arguments.validate({"a": "7", "c": 4})
    assert args == [7] and kwargs == {"c": 4}  # "7" coerced; b keeps the very default object


def test_parameters_may_be_named_like_model_attributes():
    def odd(json: str, model_config: int, schema: bool = True) -> str:
        return json

    assert FunctionTool(odd).arguments.validate({"json": "x", "model_config": 1}) == ([], {"json": "x",
                                                                                        "model_config": 1})


def test_the_decorator_marks_the_function_and_returns_it_unchanged():
    @tool
    def plain(x: int) -> int:
        return x

    @tool(name="renamed.tool", description="Said instead.", timeout=5)
    def other(x: int) -> int:
        return x

    assert plain(2) == 2 and getattr(plain, MARK).name is None
    made = FunctionTool.marked(other)
    assert made.id == "renamed_tool" and made.description.startswith("Said instead.") and made.timeout_s == 5


def test_a_built_in_name_is_refused_naming_the_clash():
    with pytest.raises(ValueError, match="`bash` is the name of a built-in tool.*@tool\\(name=\"my_bash\"\\)"):
        @tool
        def bash(command: str) -> str:
            return command

    with pytest.raises(ValueError, match="`read` is the name of a built-in tool"):
        tool(name="read")(lambda path: path)


class Connection:
    """Something a function may need but no model can send."""


def test_a_parameter_no_model_could_send_is_refused_when_the_function_is_decorated():
    with pytest.raises(TypeError, match="parameter `db` of fetch is annotated Connection, which a model cannot send"):
        @tool
        def fetch(db: Connection) -> None: ...

    with pytest.raises(TypeError, match="takes a function"):
        tool(print)


def test_names_are_sanitised_as_mcp_tool_names_are():
    assert tool_name("my tool.v2") == "my_tool_v2"
    assert len(tool_name("x" * 100)) == 64
    with pytest.raises(ValueError):
        tool_name("...")


# ------------------------------------------------------------------------------------------ in a workspace


def workspace(tmp_path: Path, turns: list[dict], permission: dict, **config: Any) -> Workspace:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True, exist_ok=True)
    ws = Workspace(root, {"model": "scripted/test", "permission": permission, **config}, data_dir=tmp_path / "data",
                   env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)})
    ws.providers.register("scripted", Scripted(turns))
    return ws


def tool_parts(ws: Workspace, session_id: str) -> list[Any]:
    return [p for m in ws.sessions.messages(session_id) for p in m.parts if p.type == "tool"]


async def test_a_wrong_typed_argument_is_an_error_the_model_reads_and_the_function_is_not_called(tmp_path):
    calls: list[int] = []

    def top_products(limit: int, region: Literal["north", "south"] = "north") -> list[str]:
        calls.append(limit)
        return ["tea", "cake"][:limit]

    turns = [{"tool_calls": [{"name": "top_products", "input": {"limit": "ten", "region": "west", "extra": 1}}]},
             {"tool_calls": [{"name": "top_products", "input": {"limit": "2"}}]},
             {"text": "Tea and cake."}]
    ws = workspace(tmp_path, turns, {"top_products": "allow"})
    ws.tools.add(top_products)
    session = ws.sessions.create()
    result = await ws.prompt(session.id, "what sells?")
    wrong, right = tool_parts(ws, session.id)
    assert wrong.state.status == "error"
    error = wrong.state.error
    assert "The top_products tool was not called" in error
    assert '- limit: Input should be a valid integer, unable to parse string as an integer; got "ten" (string)' \
        in error
    assert "- region: Input should be 'north' or 'south'; got \"west\" (string)" in error
    assert "- extra: the function has no such parameter (its parameters: limit, region)" in error
    assert right.state.status == "completed" and "Out:\n['tea', 'cake']" in right.state.output
    assert calls == [2], "the wrong call never reached the function; the right one was coerced"
    assert result.text == "Tea and cake."
    ws.close()


async def test_async_functions_are_awaited_and_exceptions_are_errors_the_session_goes_on_from(tmp_path):
    async def slow_double(n: int) -> int:
        await asyncio.sleep(0.01)
        return n * 2

    def broken(n: int) -> int:
        return n // 0

    turns = [{"tool_calls": [{"name": "slow_double", "input": {"n": 21}}, {"name": "broken", "input": {"n": 1}}]},
             {"text": "42, and the other failed."}]
    ws = workspace(tmp_path, turns, {"slow_double": "allow", "broken": "allow"})
    ws.tools.add(slow_double)
    ws.tools.add(broken)
    session = ws.sessions.create()
    result = await ws.prompt(session.id, "go")
    double, failed = sorted(tool_parts(ws, session.id), key=lambda p: p.tool)[::-1]
    assert double.state.status == "completed" and "Called slow_double(n=21)." in double.state.output
    assert "Out:\n42" in double.state.output
    assert failed.state.status == "error" and "ZeroDivisionError: integer division or modulo by zero" \
        in failed.state.error and "return n // 0" in failed.state.error
    assert result.text == "42, and the other failed."
    ws.close()


async def test_a_catch_all_allow_does_not_reach_a_persons_function_but_a_rule_naming_it_does(tmp_path):
    calls: list[str] = []

    def record(note: str) -> str:
        calls.append(note)
        return "ok"

    asked: list[Any] = []

    def on_ask(request: Any) -> str:
        asked.append(request)
        return "reject"

    turn = {"tool_calls": [{"name": "record", "input": {"note": "hello"}}]}
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    ws = Workspace(root, {"model": "scripted/test", "permission": {"*": "allow"}}, data_dir=tmp_path / "data",
                   env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}, on_ask=on_ask)
    ws.providers.register("scripted", Scripted([turn, {"text": "It was refused."}]))
    ws.tools.add(record)
    await ws.prompt(ws.sessions.create().id, "note it")
    assert calls == [], "rejected: never called"
    [request] = asked
    assert request.permission == "record" and request.patterns == ["record"]
    assert request.metadata["command"] == "record(note='hello')"
    ws.close()

    allowed = workspace(tmp_path / "2", [turn, {"text": "Noted."}], {"*": "allow", "record": "allow"})
    allowed.tools.add(record)
    await allowed.prompt(allowed.sessions.create().id, "note it")
    assert calls == ["hello"]
    allowed.close()


def test_data_explorer_is_offered_a_persons_function_only_when_a_rule_names_it(tmp_path):
    def rules(config: dict) -> list[Any]:
        registry = AgentRegistry(Config.model_validate(config), data_dir=tmp_path, tmp_dir=tmp_path)
        return list(registry.get("data-explorer").permission)

    plain = rules({})
    assert disabled(["query"], plain) == {"query"}
    assert rule_in_force("query", plain).startswith("not offered")
    named = rules({"agent": {"data-explorer": {"permission": {"query": "allow"}}}})
    assert disabled(["query"], named) == set()
    assert evaluate("query", "query", named).action == "allow"
    assert rule_in_force("query", named) == "allow (query: allow)"
    build = merge(from_config({"*": "allow"}))
    assert rule_in_force("query", build).startswith("ask (a catch-all")


def test_a_function_may_not_take_the_name_of_a_built_in_tool_in_a_workspace(tmp_path):
    ws = workspace(tmp_path, [], {})

    def grep(pattern: str) -> str:
        return pattern

    with pytest.raises(ValueError, match="`grep` is the name of a built-in tool"):
        ws.tools.add(grep)
    renamed = ws.tools.add(grep, name="my_grep")
    assert renamed.id == "my_grep" and "my_grep" in ws.tools.ids()

    def my_grep(pattern: str, ignore_case: bool = False) -> str:
        return pattern

    assert ws.tools.add(my_grep).spec().parameters["properties"].keys() == {"pattern", "ignore_case"}, \
        "a person's function replaces the one of the same name"
    ws.close()


async def test_a_call_that_is_not_an_object_is_refused_before_validation(tmp_path):
    made = FunctionTool(sales)
    with pytest.raises(ToolError, match="takes an object of named arguments"):
        await made.run(["north"], None)  # type: ignore[arg-type]
