import asyncio
import json
import os

import pytest

from opencode_nb.errors import DeniedError, RejectedError, ToolError
from opencode_nb.tool.read import ReadTool

from .fakes import RecordingContext

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24


async def test_lines_are_numbered_and_the_read_is_asked_with_the_relative_path(ctx):
    result = await ReadTool().run({"path": "src/stats.py"}, ctx)
    assert result.output == ("     1\tdef mean(values):\n     2\t    return sum(values) / len(values)\n\n"
                             "(End of file: 2 lines.)")
    [asked] = ctx.asked
    assert (asked.permission, asked.patterns, asked.always) == ("read", ["src/stats.py"], ["*"])
    assert result.title == "src/stats.py"


async def test_offset_and_limit_read_a_window_and_say_how_to_go_on(ctx, project):
    (project / "long.txt").write_text("\n".join(f"line {i}" for i in range(1, 101)))
    result = await ReadTool().run({"path": "long.txt", "offset": 10, "limit": 5}, ctx)
    assert result.output.splitlines()[:5] == [f"{i:>6}\tline {i}" for i in range(10, 15)]
    assert result.output.endswith("(Showing lines 10-14 of 100. Use offset=15 to continue.)")


async def test_by_default_at_most_2000_lines_are_read(ctx, project):
    (project / "big.txt").write_text("\n".join(str(i) for i in range(1, 3001)))
    result = await ReadTool().run({"path": "big.txt"}, ctx)
    assert result.output.splitlines()[1999] == "  2000\t2000" and "Use offset=2001" in result.output


async def test_an_offset_past_the_end_is_an_error_but_an_empty_file_reads(ctx, project):
    with pytest.raises(ToolError, match="Offset 50 is out of range for src/stats.py, which has 2 lines"):
        await ReadTool().run({"path": "src/stats.py", "offset": 50}, ctx)
    (project / "empty.txt").write_text("")
    assert (await ReadTool().run({"path": "empty.txt"}, ctx)).output == "(The file is empty.)"


async def test_very_long_lines_are_cut(ctx, project):
    (project / "wide.txt").write_text("x" * 5000)
    out = (await ReadTool().run({"path": "wide.txt"}, ctx)).output
    assert "x" * 2000 + "… (line cut at 2000 characters)" in out and "x" * 2001 not in out


async def test_a_long_read_stops_at_the_byte_bound_and_says_where_to_continue(ctx, project):
    (project / "fat.txt").write_text("\n".join("y" * 1000 for _ in range(200)))
    result = await ReadTool().run({"path": "fat.txt"}, ctx)
    assert "(Output capped at 50 KB: showing lines 1-50 of 200. Use offset=51 to continue.)" in result.output
    assert "tool-output" not in result.output


async def test_directories_are_refused_with_a_pointer_to_list(ctx):
    with pytest.raises(ToolError, match="src is a directory, not a file. Use the list tool"):
        await ReadTool().run({"path": "src"}, ctx)


@pytest.mark.parametrize(("name", "data", "why"), [
    ("blob.bin", b"\x00\x01\x02" * 100, ".bin files are not text"),
    ("data", b"abc\x00def", "NUL bytes"),
    ("noise", bytes(range(1, 9)) * 200, "control characters"),
    ("model.pkl", b"looks like text", ".pkl files are not text"),
])
async def test_binary_files_are_refused_with_a_reason(ctx, project, name, data, why):
    (project / name).write_bytes(data)
    with pytest.raises(ToolError, match=f"Cannot read {name}: it is a binary file \\(.*{why}"):
        await ReadTool().run({"path": name}, ctx)


async def test_a_missing_file_suggests_similar_names_nearby_and_elsewhere(ctx, project):
    (project / "src" / "stat_utils.py").write_text("")
    with pytest.raises(ToolError) as err:
        await ReadTool().run({"path": "src/stat.py"}, ctx)
    assert str(err.value).startswith("File not found: src/stat.py\nDid you mean one of these?\n- src/stats.py")
    with pytest.raises(ToolError, match="- src/stats.py"):
        await ReadTool().run({"path": "stats.py"}, ctx)
    with pytest.raises(ToolError) as err:
        await ReadTool().run({"path": "nothing/like/it.xyz"}, ctx)
    assert str(err.value) == "File not found: nothing/like/it.xyz"


@pytest.mark.parametrize(("name", "data", "mime"), [
    ("plot.png", PNG, "image/png"),
    ("photo.jpg", b"\xff\xd8\xff\xe0" + b"\x00" * 20, "image/jpeg"),
    ("anim.gif", b"GIF89a" + b"\x00" * 20, "image/gif"),
    ("pic.webp", b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 10, "image/webp"),
    ("misnamed.dat", PNG, "image/png"),
])
async def test_images_come_back_as_attachments(ctx, project, name, data, mime):
    (project / name).write_bytes(data)
    result = await ReadTool().run({"path": name}, ctx)
    [image] = result.attachments
    assert image.mime == mime and image.url.startswith(f"data:{mime};base64,") and image.filename == name
    assert result.output.startswith("Image read successfully")


NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "source": ["# Sales\n", "Monthly figures"], "metadata": {}},
        {"cell_type": "code", "execution_count": 3, "source": "df.describe()", "metadata": {}, "outputs": [
            {"output_type": "stream", "name": "stdout", "text": ["loading\n"] + ["x" * 100 + "\n"] * 50},
            {"output_type": "execute_result", "data": {"text/plain": "count 10", "text/html": "<table/>"},
             "metadata": {}, "execution_count": 3},
            {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
             "metadata": {}},
            {"output_type": "error", "ename": "KeyError", "evalue": "'region'",
             "traceback": ["\x1b[0;31mKeyError\x1b[0m: 'region'"]}]},
        {"cell_type": "code", "execution_count": None, "source": "", "metadata": {}, "outputs": []},
    ],
    "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5,
}


async def test_notebooks_read_as_cells_with_outputs_summarized(ctx, project):
    (project / "a.ipynb").write_text(json.dumps(NOTEBOOK))
    result = await ReadTool().run({"path": "a.ipynb"}, ctx)
    text = result.output
    assert text.startswith("Notebook a.ipynb: 3 cells, kernel python3\n\n[cell 0] markdown\n# Sales\nMonthly figures")
    assert "[cell 1] code (execution 3)\ndf.describe()\n--- outputs ---\nloading\n" in text
    assert "characters cut" in text and text.count("x" * 100) < 20
    assert "count 10\n[text/html output]" in text and "<Figure>\n[image/png output]" in text
    assert "KeyError: 'region'" in text and "\x1b" not in text and "iVBOR" not in text
    assert "[cell 2] code\n(empty)" in text and result.metadata["kind"] == "notebook"


async def test_a_broken_notebook_is_a_clear_error(ctx, project):
    (project / "bad.ipynb").write_text("{not json")
    with pytest.raises(ToolError, match="bad.ipynb is not a valid notebook: .* at line 1"):
        await ReadTool().run({"path": "bad.ipynb"}, ctx)


async def test_a_path_outside_the_workspace_also_asks_external_directory(ctx, tmp_path):
    outside = tmp_path / "elsewhere" / "notes.txt"
    outside.parent.mkdir()
    outside.write_text("secret plans")
    result = await ReadTool().run({"path": "../elsewhere/notes.txt"}, ctx)
    assert ctx.permissions() == [("external_directory", [f"{outside.parent}/*"]), ("read", [str(outside)])]
    assert ctx.asked[0].always == [f"{outside.parent}/*"] and "secret plans" in result.output


async def test_a_symlink_out_of_the_workspace_is_outside_too(ctx, project, tmp_path):
    (tmp_path / "secret.txt").write_text("x")
    (project / "link.txt").symlink_to(tmp_path / "secret.txt")
    await ReadTool().run({"path": "link.txt"}, ctx)
    assert ctx.permissions()[0] == ("external_directory", [f"{tmp_path}/*"])


async def test_a_refused_read_reveals_nothing(project):
    ctx = RecordingContext(project, reject={"read"})
    with pytest.raises(RejectedError):
        await ReadTool().run({"path": "does-not-exist.txt"}, ctx)


async def test_invalid_arguments_tell_the_model_what_to_fix(ctx):
    with pytest.raises(ToolError) as err:
        await ReadTool().run({"file": "a.py"}, ctx)
    assert "- path: Field required" in str(err.value) and "matches the tool's schema" in str(err.value)
    with pytest.raises(ToolError, match="- offset: Input should be greater than or equal to 1"):
        await ReadTool().run({"path": "a.py", "offset": 0}, ctx)


@pytest.mark.parametrize("name", ["there.txt", "missing.txt", "folder", "there.txt/below"])
async def test_an_outside_path_is_asked_about_before_anything_about_it_is_said(project, tmp_path, name):
    (tmp_path / "there.txt").write_text("secret")
    (tmp_path / "folder").mkdir()
    ctx = RecordingContext(project, deny={"external_directory"})
    with pytest.raises(DeniedError) as err:
        await ReadTool().run({"path": str(tmp_path / name)}, ctx)
    folder = (tmp_path / name).parent  # from the path alone: the same whether it is a file, a folder or nothing
    assert ctx.permissions() == [("external_directory", [f"{folder}/*"])]
    assert "secret" not in str(err.value) and "not found" not in str(err.value)


async def test_a_read_goes_through_the_descriptor_that_was_checked(ctx, project, tmp_path, monkeypatch):
    """The name is swapped for a link to outside between the open and the read: the read still gets the
    file that was opened and checked, not the one the name now points at."""
    (tmp_path / "secret.txt").write_text("outside")
    target = project / "notes.txt"
    target.write_text("inside")
    real_ask = ctx._ask

    async def swap_then_ask(permission, patterns, *args, **kwargs):
        if permission == "read":
            target.unlink()
            target.symlink_to(tmp_path / "secret.txt")
        await real_ask(permission, patterns, *args, **kwargs)

    ctx.ask = swap_then_ask
    assert "inside" in (await ReadTool().run({"path": "notes.txt"}, ctx)).output


async def test_a_fifo_is_refused_without_hanging(ctx, project):
    os.mkfifo(project / "pipe")
    with pytest.raises(ToolError, match="pipe is not a regular file"):
        await asyncio.wait_for(ReadTool().run({"path": "pipe"}, ctx), 5)


async def test_a_path_into_the_project_by_way_of_an_outside_link_is_inside(ctx, project, tmp_path):
    """As `/tmp/x` is `/private/tmp/x` on macOS: where a path leads decides, not how it was written."""
    (tmp_path / "alias").symlink_to(project)
    result = await ReadTool().run({"path": str(tmp_path / "alias" / "README.md")}, ctx)
    assert "# demo" in result.output and ctx.permissions() == [("read", ["README.md"])]


async def test_an_outside_link_is_asked_about_as_written_before_where_it_leads(project, tmp_path):
    (tmp_path / "far").mkdir()
    (tmp_path / "far" / "x.txt").write_text("secret")
    (tmp_path / "near").mkdir()
    (tmp_path / "near" / "hop").symlink_to(tmp_path / "far")
    ctx = RecordingContext(project, deny={"external_directory"})
    with pytest.raises(DeniedError):
        await ReadTool().run({"path": str(tmp_path / "near" / "hop" / "x.txt")}, ctx)
    assert ctx.permissions() == [("external_directory", [f"{tmp_path}/near/hop/*"])]  # `far` is not shown
