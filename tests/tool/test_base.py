from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from opencode_nb.errors import NotFoundError, ToolError
from opencode_nb.tool import (
    MAX_OUTPUT_BYTES,
    MAX_OUTPUT_LINES,
    Tool,
    ToolContext,
    ToolRegistry,
    ToolResult,
    default_registry,
)
from opencode_nb.tool.base import truncate

CORE_TOOLS = {"read", "write", "edit", "list", "glob", "grep", "bash", "webfetch", "todowrite", "todoread",
              "question"}


class EchoParams(BaseModel):
    text: str = Field(description="What to say")
    times: int = Field(1, ge=1, description="How often")


class EchoTool(Tool[EchoParams]):
    id = "echo"
    description = "Says the text back, as often as asked."
    params = EchoParams

    async def execute(self, params: EchoParams, ctx: ToolContext) -> ToolResult:
        return ToolResult("echo", "\n".join([params.text] * params.times))


def test_the_tool_package_exports_its_contract():
    import opencode_nb.tool as tool

    assert set(tool.__all__) == {"MAX_OUTPUT_BYTES", "MAX_OUTPUT_LINES", "Tool", "ToolContext", "ToolRegistry",
                                 "ToolResult", "default_registry"}


async def test_invalid_input_names_each_wrong_field_and_asks_for_a_rewrite(ctx):
    with pytest.raises(ToolError) as err:
        await EchoTool().run({"times": 0}, ctx)
    message = str(err.value)
    assert "- text: Field required" in message and "- times: Input should be greater than or equal to 1" in message
    assert "Rewrite the input so that it matches the tool's schema" in message


async def test_input_that_is_not_an_object_is_invalid_too(ctx):
    with pytest.raises(ToolError, match="invalid arguments"):
        await EchoTool().run("hello", ctx)


async def test_a_long_output_is_cut_and_the_whole_of_it_saved_with_a_note_on_reading_the_rest(ctx):
    result = await EchoTool().run({"text": "row", "times": MAX_OUTPUT_LINES + 500}, ctx)
    saved = Path(result.metadata["output_path"])
    assert saved.parent == ctx.data_dir / "tool-output"
    assert saved.read_text() == "\n".join(["row"] * (MAX_OUTPUT_LINES + 500))
    shown, note = result.output.split("\n\n(Output truncated: ")
    assert len(shown.splitlines()) == MAX_OUTPUT_LINES
    assert note.startswith("500 more lines not shown") and str(saved) in note
    assert "read tool (offset and limit)" in note and "grep" in note and result.metadata["truncated"] is True


def test_the_byte_bound_applies_too(ctx):
    text = "\n".join("x" * 1000 for _ in range(200))
    result = truncate(ToolResult("t", text), ctx)
    shown = result.output.split("\n\n(Output truncated")[0]
    assert len(shown.encode()) <= MAX_OUTPUT_BYTES and "149 more lines not shown" in result.output


def test_one_enormous_line_is_cut_inside_the_line(ctx):
    result = truncate(ToolResult("t", "y" * (3 * MAX_OUTPUT_BYTES)), ctx)
    assert result.output.startswith("y" * 1000) and "the rest of a very long line" in result.output
    assert Path(result.metadata["output_path"]).stat().st_size == 3 * MAX_OUTPUT_BYTES


def test_the_tail_can_be_kept_instead_of_the_head(ctx):
    text = "\n".join(f"line {i}" for i in range(MAX_OUTPUT_LINES + 10))
    result = truncate(ToolResult("t", text), ctx, keep="tail")
    assert result.output.startswith("(Output truncated: 10 more lines")
    assert result.output.endswith(f"line {MAX_OUTPUT_LINES + 9}") and "\nline 10\n" in result.output


def test_outputs_within_both_bounds_are_untouched(ctx):
    exactly = "\n".join(["a"] * MAX_OUTPUT_LINES) + "\n"
    for result in (ToolResult("t", "fine"), ToolResult("t", exactly)):
        assert truncate(result, ctx) is result


async def test_a_tool_that_bounds_its_own_output_is_left_alone(ctx):
    class Paged(EchoTool):
        async def execute(self, params, ctx):
            return ToolResult("p", "z\n" * (MAX_OUTPUT_LINES + 5), {"truncated": False})

    result = await Paged().run({"text": "x"}, ctx)
    assert "Output truncated" not in result.output and not (ctx.data_dir / "tool-output").exists()


def test_the_spec_carries_the_name_description_and_json_schema():
    spec = EchoTool().spec()
    assert (spec.name, spec.description) == ("echo", "Says the text back, as often as asked.")
    assert spec.parameters["required"] == ["text"]
    assert spec.parameters["properties"]["times"]["description"] == "How often"


def test_the_description_is_the_text_file_beside_the_tool_module():
    from opencode_nb.tool.read import ReadTool

    beside = Path(__import__("opencode_nb.tool.read").tool.read.__file__).with_name("read.txt")
    assert ReadTool().spec().description == beside.read_text(encoding="utf-8").strip()


def test_every_core_tool_has_a_description_and_the_parameter_names_of_the_design():
    registry = default_registry()
    assert set(registry.ids()) >= CORE_TOOLS
    expected = {
        "read": {"path", "offset", "limit"}, "write": {"path", "content"},
        "edit": {"path", "old_string", "new_string", "replace_all"}, "list": {"path", "ignore"},
        "glob": {"pattern", "path"}, "grep": {"pattern", "path", "include"},
        "bash": {"command", "timeout", "description"}, "webfetch": {"url", "format", "timeout"},
        "todowrite": {"todos"}, "todoread": set(), "question": {"questions"},
    }
    for spec in registry.specs(sorted(CORE_TOOLS)):
        assert len(spec.description) > 80, spec.name
        assert set(spec.parameters.get("properties", {})) == expected[spec.name], spec.name


def test_nested_parameter_names_match_the_design_too():
    registry = default_registry()
    todo = registry.get("todowrite").params.model_json_schema()
    assert set(todo["$defs"]["TodoItem"]["properties"]) == {"content", "status", "priority"}
    question = registry.get("question").params.model_json_schema()["$defs"]
    assert set(question["QuestionParam"]["properties"]) == {"question", "header", "options", "multiple"}
    assert set(question["OptionParam"]["properties"]) == {"label", "description"}


def test_the_registry_finds_tools_by_id_and_names_the_known_ones_otherwise():
    registry = ToolRegistry([EchoTool()])
    assert registry.ids() == ["echo"] and isinstance(registry.get("echo"), EchoTool)
    with pytest.raises(NotFoundError, match="known tools: echo"):
        registry.get("nope")
    with pytest.raises(NotFoundError):
        registry.specs(["nope"])


def test_registering_the_same_id_replaces_the_tool():
    registry = default_registry()
    mine = EchoTool()
    mine.id = "read"
    registry.register(mine)
    assert registry.get("read") is mine
