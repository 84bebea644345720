import os

import pytest

from opencode_nb.errors import DeniedError, ToolError
from opencode_nb.tool.list import ListTool

from .fakes import RecordingContext


async def test_list_shows_an_indented_tree_without_ignored_files(ctx, tree):
    result = await ListTool().run({"path": "."}, ctx)
    assert result.output == (f"{tree}/\n  .gitignore\n  README.md\n  notebooks/\n    a.ipynb\n  src/\n    median.py\n"
                             "    stats.py\n    deep/\n      .gitignore\n      kept.py")
    assert ctx.permissions() == [("list", ["."])] and result.metadata["count"] == 7


async def test_list_of_a_subfolder_still_applies_the_workspace_gitignore(ctx, tree):
    (tree / "src" / "debug.log").write_text("")
    out = (await ListTool().run({"path": "src"}, ctx)).output
    assert "debug.log" not in out and "kept.py" in out and "scratch.py" not in out


async def test_list_takes_extra_ignore_patterns(ctx, tree):
    out = (await ListTool().run({"path": ".", "ignore": ["*.ipynb", "deep/"]}, ctx)).output
    assert "a.ipynb" not in out and "kept.py" not in out and "stats.py" in out


async def test_list_is_bounded_with_a_note(ctx, project):
    for i in range(150):
        (project / f"f{i:03}.txt").write_text("")
    result = await ListTool().run({}, ctx)
    assert "(Showing the first 100 of 152 files." in result.output
    assert result.output.count("\n  f") == 100 - 2 + 1 and result.metadata["count"] == 152


async def test_list_of_a_file_or_a_missing_folder_is_a_clear_error(ctx):
    with pytest.raises(ToolError, match="README.md is a file, not a directory. Use the read tool"):
        await ListTool().run({"path": "README.md"}, ctx)
    with pytest.raises(ToolError, match="Directory not found: nowhere"):
        await ListTool().run({"path": "nowhere"}, ctx)


async def test_listing_outside_the_workspace_asks_external_directory(ctx, tmp_path):
    await ListTool().run({"path": str(tmp_path)}, ctx)
    assert ctx.permissions()[0] == ("external_directory", [f"{tmp_path}/*"])


async def test_a_negated_gitignore_pattern_keeps_the_file(ctx, project):
    (project / ".gitignore").write_text("*.log\n!keep.log\n")
    (project / "drop.log").write_text("")
    (project / "keep.log").write_text("")
    out = (await ListTool().run({}, ctx)).output
    assert "keep.log" in out and "drop.log" not in out


async def test_links_and_special_files_are_not_listed(ctx, project, tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("")
    (project / "door").symlink_to(tmp_path / "outside")
    (project / "alias.md").symlink_to(project / "README.md")
    os.mkfifo(project / "pipe")
    out = (await ListTool().run({}, ctx)).output
    assert "door" not in out and "secret" not in out and "alias" not in out and "pipe" not in out


async def test_a_folder_given_as_a_link_out_asks_for_where_it_leads(project, tmp_path):
    (project / "door").symlink_to(tmp_path)
    ctx = RecordingContext(project, deny={"external_directory"})
    with pytest.raises(DeniedError):
        await ListTool().run({"path": "door"}, ctx)
    assert ctx.permissions() == [("external_directory", [f"{tmp_path}/*"])]
