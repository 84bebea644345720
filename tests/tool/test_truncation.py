from pathlib import Path

from opencode_nb.tool.base import MAX_OUTPUT_BYTES, MAX_OUTPUT_LINES, ToolResult, truncate


def test_a_long_output_is_cut_and_saved_whole_with_a_note_on_how_to_see_the_rest(ctx):
    text = "\n".join(f"row {i}" for i in range(MAX_OUTPUT_LINES + 500))
    result = truncate(ToolResult("t", text), ctx)
    saved = Path(result.metadata["output_path"])
    assert saved.read_text() == text and saved.parent == ctx.data_dir / "tool-output"
    kept = result.output.split("\n\n...")[0].splitlines()
    assert len(kept) == MAX_OUTPUT_LINES
    assert "500 more lines were cut" in result.output and "read tool (offset and limit)" in result.output


def test_the_byte_bound_applies_too(ctx):
    text = "\n".join("x" * 1000 for _ in range(200))
    result = truncate(ToolResult("t", text), ctx)
    assert len(result.output.encode()) < MAX_OUTPUT_BYTES + 500 and result.metadata["truncated"]


def test_short_outputs_are_untouched(ctx):
    result = ToolResult("t", "fine")
    assert truncate(result, ctx) is result
