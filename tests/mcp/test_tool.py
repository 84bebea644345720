"""An MCP tool as the model sees it: its name, its schema, and its results turned into ours."""

from __future__ import annotations

import mcp_types as types
import pytest

from opencode_nb.errors import ToolError
from opencode_nb.mcp import rule_in_force, tool_name
from opencode_nb.mcp.tool import McpTool, as_result
from opencode_nb.permission import from_config


def test_names_are_server_then_tool_in_characters_every_provider_accepts():
    assert tool_name("github", "create_issue") == "github_create_issue"
    assert tool_name("my.server", "run query/v2") == "my_server_run_query_v2"
    assert len(tool_name("s" * 40, "t" * 40)) == 64


def test_the_spec_is_the_server_s_schema_and_says_where_the_tool_comes_from():
    tool = types.Tool(name="query", description="Run SQL.", input_schema={
        "type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]})
    spec = McpTool("db_query", "db", tool, lambda: None).spec()  # type: ignore[arg-type]
    assert spec.name == "db_query" and spec.parameters["required"] == ["sql"]
    assert spec.description.startswith("Run SQL.") and "MCP server `db`" in spec.description


def test_text_images_resources_and_structured_content_become_a_result():
    result = types.CallToolResult(content=[
        types.TextContent(type="text", text="two things"),
        types.ImageContent(type="image", data="iVBORw0K", mime_type="image/png"),
        types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
            uri="file:///notes.md", text="# notes")),
        types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(
            uri="file:///a.bin", blob="AAAA", mime_type="application/octet-stream")),
        types.ResourceLink(type="resource_link", name="report", uri="file:///report.pdf"),
    ], structured_content={"rows": 2})
    out = as_result("db · query", "db", "query", result)
    assert out.output.split("\n\n") == [
        "two things", "[image 1: image/png, attached]", "[resource file:///notes.md]\n# notes",
        "[binary resource file:///a.bin (application/octet-stream, about 3 bytes); not shown]",
        "[resource link: report file:///report.pdf]"]
    assert [a.url for a in out.attachments] == ["data:image/png;base64,iVBORw0K"]
    assert out.metadata == {"server": "db", "tool": "query", "structured": {"rows": 2}}


def test_structured_content_alone_is_the_text_and_an_error_result_is_a_tool_error():
    only = as_result("t", "db", "count", types.CallToolResult(content=[], structured_content={"n": 3}))
    assert '"n": 3' in only.output
    with pytest.raises(ToolError, match="reported an error from query: no such table"):
        as_result("t", "db", "query", types.CallToolResult(content=[types.TextContent(type="text",
                                                           text="no such table")], is_error=True))


def test_the_rule_in_force_treats_a_catch_all_allow_as_ask():
    assert rule_in_force("db_query", from_config({"*": "allow"})).startswith("ask")
    assert rule_in_force("db_query", from_config({"*": "allow", "db_*": "allow"})) == "allow (db_*: allow)"
    assert rule_in_force("db_query", from_config({"db_query": "deny"})) == "deny (db_query: deny)"
