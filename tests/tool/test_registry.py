"""The registry tells tools apart by where they come from (`Tool.kind`), never by the name of their class."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest

from opencode_nb.mcp.tool import McpTool
from opencode_nb.tool.base import Tool
from opencode_nb.tool.person import FunctionTool
from opencode_nb.tool.read import ReadTool
from opencode_nb.tool.registry import ToolRegistry


def query(sql: str) -> str:
    return sql


def test_each_kind_of_tool_says_where_it_comes_from():
    server_tool = McpTool("db_query", "db", types.Tool(name="query", input_schema={}), lambda: None)  # type: ignore[arg-type]
    assert (ReadTool().kind, server_tool.kind, FunctionTool(query).kind) == ("builtin", "mcp", "function")


def test_a_function_may_not_take_the_name_of_a_server_s_tool_and_is_told_whose_it_is():
    registry = ToolRegistry([McpTool("query", "db", types.Tool(name="query", input_schema={}), lambda: None)])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`query` is the name of an MCP server's tool"):
        registry.add(query)


def test_the_kind_decides_not_the_class_name():
    class McpTool(Tool[Any]):  # named like the MCP layer's class, but shipped with the package
        id = "query"

    registry = ToolRegistry([McpTool()])
    with pytest.raises(ValueError, match="`query` is the name of a built-in tool"):
        registry.add(query)


def test_a_person_s_function_replaces_an_earlier_one_of_the_same_name():
    registry = ToolRegistry()
    first = registry.add(query)
    second = registry.add(query, description="Run it again.")
    assert registry.get("query") is second is not first
