import asyncio

import pytest

from opencode_nb.errors import CorrectedError, DeniedError, RejectedError, ToolError
from opencode_nb.tool.edit import EditTool, apply_edit

from .fakes import RecordingContext

SOURCE = "def f():\n    x = 1\n    return x\n\n\ndef g():\n    return 2\n"


async def test_a_unique_exact_match_is_replaced_and_the_diff_asked_before_writing(ctx, project):
    result = await EditTool().run({"path": "src/stats.py", "old_string": "len(values)",
                                   "new_string": "max(len(values), 1)"}, ctx)
    assert (project / "src/stats.py").read_text().endswith("/ max(len(values), 1)\n")
    [asked] = ctx.asked
    assert (asked.permission, asked.patterns, asked.always) == ("edit", ["src/stats.py"], ["*"])
    diff = asked.metadata["diff"]
    assert "-    return sum(values) / len(values)\n+    return sum(values) / max(len(values), 1)" in diff
    assert result.metadata["diff"] == asked.metadata["diff"] and result.metadata["match"] == "exact"
    assert result.output == "Edited src/stats.py: +1 -1 lines."


async def test_the_file_is_unchanged_while_the_person_is_still_deciding(project):
    decided = asyncio.Event()
    seen = []

    async def ask(permission, patterns, always=None, metadata=None, **_):
        seen.append((project / "src/stats.py").read_text())
        await decided.wait()

    ctx = RecordingContext(project)
    ctx.ask = ask
    task = asyncio.create_task(EditTool().run({"path": "src/stats.py", "old_string": "sum", "new_string": "fsum"},
                                              ctx))
    await asyncio.sleep(0.05)
    assert "fsum" not in (project / "src/stats.py").read_text() and seen
    decided.set()
    await task
    assert "fsum" in (project / "src/stats.py").read_text()


@pytest.mark.parametrize("refusal", [{"reject": {"edit"}}, {"correct": {"edit": "use math.fsum"}}])
async def test_a_refused_edit_changes_nothing(project, refusal):
    ctx = RecordingContext(project, **refusal)
    before = (project / "src/stats.py").read_text()
    with pytest.raises(RejectedError) as err:
        await EditTool().run({"path": "src/stats.py", "old_string": "sum", "new_string": "total"}, ctx)
    assert (project / "src/stats.py").read_text() == before
    if "correct" in refusal:
        assert isinstance(err.value, CorrectedError) and "use math.fsum" in str(err.value)


def test_an_ambiguous_match_says_how_many_and_what_to_do():
    with pytest.raises(ToolError, match="matches 2 places in the file. Add more surrounding lines.*replace_all"):
        apply_edit("a = 1\na = 1\n", "a = 1", "a = 2")
    assert apply_edit("a = 1\na = 1\n", "a = 1", "a = 2", replace_all=True) == ("a = 2\na = 2\n", "exact")


def test_not_found_says_to_read_the_file_again():
    with pytest.raises(ToolError, match="Could not find old_string in the file.*Read the file again"):
        apply_edit(SOURCE, "y = 3", "y = 4")


def test_line_numbers_copied_from_read_output_are_pointed_out():
    with pytest.raises(ToolError, match="include the line numbers of read's output"):
        apply_edit(SOURCE, "     2\t    x = 1", "     2\t    x = 5")


def test_trailing_whitespace_differences_are_tolerated():
    new, how = apply_edit(SOURCE, "    x = 1   \n    return x", "    x = 5\n    return x")
    assert new.startswith("def f():\n    x = 5\n    return x\n\n") and how == "line-trimmed"


def test_a_block_quoted_at_another_indentation_is_found_and_reindented():
    source = "class A:\n    def f(self):\n        if x:\n            return 1\n"
    old, replacement = "def f(self):\n    if x:\n        return 1", "def f(self):\n    if x:\n        return 2"
    new, how = apply_edit(source, old, replacement)
    assert new == "class A:\n    def f(self):\n        if x:\n            return 2\n" and how == "indentation-flexible"


def test_whitespace_differences_inside_a_line_are_tolerated():
    new, how = apply_edit(SOURCE, "x  =  1", "x = 9")
    assert "    x = 9\n" in new and how == "whitespace-normalized"
    new, _ = apply_edit("total = a +\n        b\n", "a + b", "a + c")
    assert new == "total = a + c\n"


def test_a_loose_match_in_two_places_is_refused_rather_than_guessed():
    with pytest.raises(ToolError, match=r"matches 2 places in the file \(ignoring trailing whitespace\)"):
        apply_edit("def a():\n    pass\n\ndef b():\n    pass\n", "    pass  ", "    return")
    new, _ = apply_edit("def a():\n    pass\n\ndef b():\n    pass\n", "    pass  ", "    return", replace_all=True)
    assert new.count("return") == 2


def test_crlf_files_are_matched_with_lf_text_and_keep_crlf():
    new, how = apply_edit("a = 1\r\nb = 2\r\n", "a = 1\nb = 2", "a = 1\nb = 3")
    assert new == "a = 1\r\nb = 3\r\n" and how == "exact"


async def test_crlf_survives_a_round_trip_through_the_file(ctx, project):
    (project / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    await EditTool().run({"path": "win.txt", "old_string": "two", "new_string": "three"}, ctx)
    assert (project / "win.txt").read_bytes() == b"one\r\nthree\r\n"


async def test_same_old_and_new_is_an_error(ctx):
    with pytest.raises(ToolError, match="identical: there is nothing to change"):
        await EditTool().run({"path": "src/stats.py", "old_string": "x", "new_string": "x"}, ctx)


async def test_an_empty_old_string_creates_a_new_file_but_never_overwrites_one(ctx, project):
    result = await EditTool().run({"path": "new/module.py", "old_string": "", "new_string": "A = 1\n"}, ctx)
    assert (project / "new/module.py").read_text() == "A = 1\n" and result.output.startswith("Created new/module.py")
    with pytest.raises(ToolError, match="old_string is empty but src/stats.py already exists"):
        await EditTool().run({"path": "src/stats.py", "old_string": "", "new_string": "oops"}, ctx)


async def test_a_missing_file_or_a_directory_is_a_clear_error(ctx):
    with pytest.raises(ToolError, match="File not found: nope.py.*glob can find it"):
        await EditTool().run({"path": "nope.py", "old_string": "a", "new_string": "b"}, ctx)
    with pytest.raises(ToolError, match="src is a directory"):
        await EditTool().run({"path": "src", "old_string": "a", "new_string": "b"}, ctx)


async def test_a_file_that_is_not_utf8_is_not_edited(ctx, project):
    (project / "latin.txt").write_bytes("café".encode("latin-1"))
    with pytest.raises(ToolError, match="not UTF-8 text"):
        await EditTool().run({"path": "latin.txt", "old_string": "caf", "new_string": "bar"}, ctx)


async def test_parallel_edits_of_one_file_both_land(ctx, project):
    (project / "many.py").write_text("".join(f"v{i} = 0\n" for i in range(10)))
    edits = [{"path": "many.py", "old_string": f"v{i} = 0", "new_string": f"v{i} = {i + 1}"} for i in range(10)]
    await asyncio.gather(*(EditTool().run(edit, ctx) for edit in edits))
    assert (project / "many.py").read_text() == "".join(f"v{i} = {i + 1}\n" for i in range(10))


async def test_editing_outside_the_workspace_asks_external_directory(ctx, tmp_path):
    (tmp_path / "other.txt").write_text("old\n")
    await EditTool().run({"path": str(tmp_path / "other.txt"), "old_string": "old", "new_string": "new"}, ctx)
    assert ctx.permissions() == [("external_directory", [f"{tmp_path}/*"]), ("edit", [str(tmp_path / "other.txt")])]


@pytest.mark.parametrize("name", ["passwd", "missing", "folder"])
async def test_an_outside_edit_reveals_nothing_before_external_directory(project, tmp_path, name):
    (tmp_path / "passwd").write_text("root:x:0:0\n")
    (tmp_path / "folder").mkdir()
    ctx = RecordingContext(project, deny={"external_directory"})
    with pytest.raises(DeniedError) as err:
        await EditTool().run({"path": str(tmp_path / name), "old_string": "nobody", "new_string": "x"}, ctx)
    assert ctx.permissions() == [("external_directory", [f"{tmp_path}/*"])]
    assert "Could not find" not in str(err.value) and "not found" not in str(err.value)


async def test_once_allowed_outside_the_usual_answers_come_back(ctx, tmp_path):
    (tmp_path / "passwd").write_text("root:x:0:0\n")
    with pytest.raises(ToolError, match=f"Could not find old_string in {tmp_path}/passwd"):
        await EditTool().run({"path": str(tmp_path / "passwd"), "old_string": "nobody", "new_string": "x"}, ctx)


async def test_an_edit_of_git_config_asks_git_internals(project):
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text("[core]\n")
    ctx = RecordingContext(project, reject={"git_internals"})
    with pytest.raises(RejectedError):
        await EditTool().run({"path": ".git/config", "old_string": "[core]",
                              "new_string": "[core]\n\tfsmonitor = ./x"}, ctx)
    assert ctx.permissions() == [("edit", [".git/config"]), ("git_internals", [".git/config"])]
    assert (project / ".git" / "config").read_text() == "[core]\n"
