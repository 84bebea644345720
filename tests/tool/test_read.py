import json

import pytest

from opencode_nb.errors import ToolError
from opencode_nb.tool.read import ReadTool


async def test_lines_are_numbered_and_the_read_is_asked_with_the_relative_path(ctx, project):
    result = await ReadTool().run({"path": "src/stats.py"}, ctx)
    assert result.output.splitlines()[0] == "     1\tdef mean(values):"
    [asked] = ctx.extra["asked"]
    assert (asked.permission, asked.patterns, asked.always) == ("read", ["src/stats.py"], ["*"])


async def test_offset_and_limit_read_a_window_and_say_how_to_go_on(ctx, project):
    (project / "long.txt").write_text("\n".join(f"line {i}" for i in range(1, 101)))
    result = await ReadTool().run({"path": "long.txt", "offset": 10, "limit": 5}, ctx)
    assert result.output.splitlines()[0] == "    10\tline 10"
    assert "offset=15" in result.output


async def test_very_long_lines_are_cut(ctx, project):
    (project / "wide.txt").write_text("x" * 5000)
    assert "(line cut)" in (await ReadTool().run({"path": "wide.txt"}, ctx)).output


async def test_binary_files_and_directories_are_refused_with_a_reason(ctx, project):
    (project / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    with pytest.raises(ToolError, match="binary"):
        await ReadTool().run({"path": "blob.bin"}, ctx)
    with pytest.raises(ToolError, match="use the list tool"):
        await ReadTool().run({"path": "src"}, ctx)


async def test_a_missing_file_suggests_near_names(ctx):
    with pytest.raises(ToolError, match="Did you mean.*stats.py"):
        await ReadTool().run({"path": "src/stat.py"}, ctx)


async def test_images_come_back_as_attachments(ctx, project):
    (project / "plot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 20)
    result = await ReadTool().run({"path": "plot.png"}, ctx)
    [image] = result.attachments
    assert image.mime == "image/png" and image.url.startswith("data:image/png;base64,")


async def test_notebooks_read_as_cells_with_outputs_summarized(ctx, project):
    nb = {"cells": [
        {"cell_type": "markdown", "source": ["# Sales"], "metadata": {}},
        {"cell_type": "code", "execution_count": 3, "source": "df.describe()", "metadata": {}, "outputs": [
            {"output_type": "execute_result", "data": {"text/plain": "count 10", "text/html": "<table/>"}},
            {"output_type": "display_data", "data": {"image/png": "AAAA"}},
            {"output_type": "error", "ename": "KeyError", "evalue": "'region'", "traceback": []}]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (project / "a.ipynb").write_text(json.dumps(nb))
    text = (await ReadTool().run({"path": "a.ipynb"}, ctx)).output
    assert "[0] markdown\n# Sales" in text
    assert "[1] code (execution 3)\ndf.describe()" in text
    assert "count 10  [also text/html]" in text and "[image/png output]" in text and "KeyError: 'region'" in text


async def test_a_path_outside_the_workspace_also_asks_external_directory(ctx, project, tmp_path):
    outside = tmp_path / "elsewhere" / "notes.txt"
    outside.parent.mkdir()
    outside.write_text("secret plans")
    await ReadTool().run({"path": "../elsewhere/notes.txt"}, ctx)
    permissions = [(a.permission, a.patterns) for a in ctx.extra["asked"]]
    assert permissions == [("read", [str(outside)]), ("external_directory", [f"{outside.parent}/*"])]


async def test_a_symlink_out_of_the_workspace_is_outside_too(ctx, project, tmp_path):
    (tmp_path / "secret.txt").write_text("x")
    (project / "link.txt").symlink_to(tmp_path / "secret.txt")
    await ReadTool().run({"path": "link.txt"}, ctx)
    assert ctx.extra["asked"][-1].permission == "external_directory"


async def test_invalid_arguments_tell_the_model_what_to_fix(ctx):
    with pytest.raises(ToolError) as err:
        await ReadTool().run({"file": "a.py"}, ctx)
    assert "- path: Field required" in str(err.value) and "matches the tool's schema" in str(err.value)
