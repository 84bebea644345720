import pytest

from opencode_nb.errors import RejectedError, ToolError
from opencode_nb.tool.write import WriteTool

from .fakes import RecordingContext


async def test_write_creates_folders_and_shows_the_diff_in_the_request_and_the_result(ctx, project):
    result = await WriteTool().run({"path": "out/report.md", "content": "# Report\n"}, ctx)
    assert (project / "out/report.md").read_text() == "# Report\n"
    [asked] = ctx.asked
    assert (asked.permission, asked.patterns, asked.always) == ("edit", ["out/report.md"], ["*"])
    assert "+# Report" in asked.metadata["diff"] and result.metadata["diff"] == asked.metadata["diff"]
    assert result.output == "Created out/report.md (1 line)." and result.metadata["created"] is True


async def test_replacing_a_file_diffs_against_what_was_there(ctx, project):
    result = await WriteTool().run({"path": "README.md", "content": "# demo\n\nMore.\n"}, ctx)
    assert result.metadata["diff"].splitlines()[-2:] == ["+", "+More."]
    assert (result.metadata["additions"], result.metadata["deletions"]) == (2, 0)


async def test_content_is_written_exactly_line_endings_included(ctx, project):
    await WriteTool().run({"path": "win.txt", "content": "a\r\nb\r\n"}, ctx)
    assert (project / "win.txt").read_bytes() == b"a\r\nb\r\n"


async def test_a_refused_write_writes_nothing(project):
    ctx = RecordingContext(project, reject={"edit"})
    with pytest.raises(RejectedError):
        await WriteTool().run({"path": "x.txt", "content": "x"}, ctx)
    assert not (project / "x.txt").exists()


async def test_a_directory_cannot_be_written(ctx):
    with pytest.raises(ToolError, match="src is a directory"):
        await WriteTool().run({"path": "src", "content": ""}, ctx)


async def test_writing_outside_the_workspace_asks_external_directory(ctx, tmp_path):
    await WriteTool().run({"path": "../notes/todo.txt", "content": "x"}, ctx)
    assert ctx.permissions()[0] == ("external_directory", [f"{tmp_path}/notes/*"])
    assert (tmp_path / "notes" / "todo.txt").read_text() == "x"
