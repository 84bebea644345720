import pytest

from opencode_nb.errors import RejectedError, ToolError
from opencode_nb.tool.edit import EditTool, apply_edit
from opencode_nb.tool.write import WriteTool

from .fakes import recording_context

SOURCE = "def f():\n    x = 1\n    return x\n\n\ndef g():\n    return 2\n"


async def test_a_unique_exact_match_is_replaced_and_the_diff_shown_before_writing(ctx, project):
    result = await EditTool().run({"path": "src/stats.py", "old_string": "len(values)",
                                   "new_string": "max(len(values), 1)"}, ctx)
    assert "max(len(values), 1)" in (project / "src/stats.py").read_text()
    [asked] = ctx.extra["asked"]
    assert asked.permission == "edit" and asked.patterns == ["src/stats.py"]
    assert "+    return sum(values) / max(len(values), 1)" in asked.metadata["diff"]
    assert result.metadata["diff"] == asked.metadata["diff"]


async def test_a_refused_edit_changes_nothing(project):
    ctx = recording_context(project, reject={"edit"})
    before = (project / "src/stats.py").read_text()
    with pytest.raises(RejectedError):
        await EditTool().run({"path": "src/stats.py", "old_string": "sum", "new_string": "total"}, ctx)
    assert (project / "src/stats.py").read_text() == before


def test_an_ambiguous_match_says_how_many_and_what_to_do():
    with pytest.raises(ToolError, match="occurs 2 times.*replace_all"):
        apply_edit("a = 1\na = 1\n", "a = 1", "a = 2", False)
    assert apply_edit("a = 1\na = 1\n", "a = 1", "a = 2", True) == "a = 2\na = 2\n"


def test_not_found_says_to_read_again():
    with pytest.raises(ToolError, match="not found.*Read the file again"):
        apply_edit(SOURCE, "y = 3", "y = 4", False)


def test_trailing_whitespace_differences_are_tolerated():
    assert apply_edit(SOURCE, "    x = 1   \n    return x", "    x = 5\n    return x", False).startswith(
        "def f():\n    x = 5\n    return x\n")


def test_collapsed_whitespace_differences_are_tolerated():
    assert "x  =  9" not in apply_edit(SOURCE, "x  =  1", "x = 9", False)
    assert "    x = 9\n" in apply_edit(SOURCE, "x  =  1", "x = 9", False)


def test_a_block_quoted_at_another_indentation_is_found_and_reindented():
    source = "class A:\n    def f(self):\n        return 1\n"
    assert apply_edit(source, "def f(self):\n    return 1", "def f(self):\n    return 2", False) == (
        "class A:\n    def f(self):\n        return 2\n")


def test_a_loose_match_in_two_places_is_refused_rather_than_guessed():
    with pytest.raises(ToolError, match="2 places"):
        apply_edit("def a():\n    pass\n\ndef b():\n    pass\n", "pass  ", "return", False)


async def test_same_old_and_new_is_an_error(ctx):
    with pytest.raises(ToolError, match="nothing to change"):
        await EditTool().run({"path": "src/stats.py", "old_string": "x", "new_string": "x"}, ctx)


async def test_an_empty_old_string_creates_a_new_file(ctx, project):
    await EditTool().run({"path": "new/module.py", "old_string": "", "new_string": "A = 1\n"}, ctx)
    assert (project / "new/module.py").read_text() == "A = 1\n"


async def test_write_creates_folders_and_reports_a_diff(ctx, project):
    result = await WriteTool().run({"path": "out/report.md", "content": "# Report\n"}, ctx)
    assert (project / "out/report.md").read_text() == "# Report\n"
    assert "+# Report" in result.metadata["diff"] and ctx.extra["asked"][0].permission == "edit"
