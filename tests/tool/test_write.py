import pytest

from opencode_nb.errors import DeniedError, RejectedError, ToolError
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


@pytest.mark.parametrize("path", ["x.txt", "a/b/c.txt"])
async def test_a_refused_write_writes_nothing_not_even_the_folders(project, path):
    ctx = RecordingContext(project, reject={"edit"})
    with pytest.raises(RejectedError):
        await WriteTool().run({"path": path, "content": "x"}, ctx)
    assert not (project / path.split("/")[0]).exists()


async def test_a_directory_cannot_be_written(ctx):
    with pytest.raises(ToolError, match="src is a directory"):
        await WriteTool().run({"path": "src", "content": ""}, ctx)


async def test_writing_outside_the_workspace_asks_external_directory(ctx, tmp_path):
    await WriteTool().run({"path": "../notes/todo.txt", "content": "x"}, ctx)
    assert ctx.permissions()[0] == ("external_directory", [f"{tmp_path}/notes/*"])
    assert (tmp_path / "notes" / "todo.txt").read_text() == "x"


@pytest.mark.parametrize("path", [".git/hooks/pre-commit", ".git/config", "lib/.git/config", "to-hooks/post-merge"])
async def test_a_write_into_git_asks_git_internals_as_well_as_edit(project, path):
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / "to-hooks").symlink_to(project / ".git" / "hooks")
    ctx = RecordingContext(project, reject={"git_internals"})
    with pytest.raises(RejectedError):
        await WriteTool().run({"path": path, "content": "#!/bin/sh\n"}, ctx)
    real = path.replace("to-hooks", ".git/hooks")
    assert ctx.permissions() == [("edit", [real]), ("git_internals", [real])]
    assert "diff" in ctx.asked[1].metadata and not (project / real).exists()


async def test_other_writes_do_not_ask_git_internals(ctx):
    await WriteTool().run({"path": "gitignore-notes/.gitignore", "content": "x\n"}, ctx)
    assert [p for p, _ in ctx.permissions()] == ["edit"]


@pytest.mark.parametrize("name", ["there.txt", "missing.txt", "folder"])
async def test_an_outside_write_reveals_nothing_before_external_directory(project, tmp_path, name):
    (tmp_path / "there.txt").write_text("secret")
    (tmp_path / "folder").mkdir()
    ctx = RecordingContext(project, deny={"external_directory"})
    with pytest.raises(DeniedError):
        await WriteTool().run({"path": str(tmp_path / name), "content": "x"}, ctx)
    assert ctx.permissions() == [("external_directory", [f"{tmp_path}/*"])]
    assert (tmp_path / "there.txt").read_text() == "secret" and not (tmp_path / "missing.txt").exists()


async def test_a_link_that_dangles_out_of_the_project_is_outside(project, tmp_path):
    (project / "out").symlink_to(tmp_path / "made-outside.txt")
    ctx = RecordingContext(project, deny={"external_directory"})
    with pytest.raises(DeniedError):
        await WriteTool().run({"path": "out", "content": "x"}, ctx)
    assert not (tmp_path / "made-outside.txt").exists()


async def test_a_write_into_the_configured_hooks_path_asks_git_internals(project):
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text('[core]\n\tbare = false\n[core]\n\thooksPath = ".husky/_"  # husky\n')
    ctx = RecordingContext(project, reject={"git_internals"})
    with pytest.raises(RejectedError):
        await WriteTool().run({"path": ".husky/_/pre-commit", "content": "touch pwned\n"}, ctx)
    await WriteTool().run({"path": ".husky/notes.md", "content": "x\n"}, ctx)
    assert ctx.permissions() == [("edit", [".husky/_/pre-commit"]), ("git_internals", [".husky/_/pre-commit"]),
                                 ("edit", [".husky/notes.md"])]
