import os
import shutil

import pytest

from opencode_nb.errors import ToolError
from opencode_nb.tool.grep import GrepTool

rg_missing = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed (CI installs it)")


@pytest.fixture(params=["python", pytest.param("rg", marks=rg_missing)])
def engine(request, monkeypatch):
    """Every grep test runs with the pure-Python search, and again with ripgrep when it is installed."""
    if request.param == "python":
        monkeypatch.setattr("opencode_nb.tool.grep.shutil.which", lambda name: None)
    return request.param


async def test_grep_groups_matches_by_file_with_line_numbers(ctx, tree, engine):
    os.utime(tree / "src/stats.py", (2_000_000, 2_000_000))
    os.utime(tree / "src/median.py", (1_000_000, 1_000_000))
    result = await GrepTool().run({"pattern": r"def (mean|median)\b"}, ctx)
    assert result.output == "src/stats.py:\n  1: def mean(values):\n\nsrc/median.py:\n  1: def median(values):"
    assert result.metadata["engine"] == engine and result.metadata["matches"] == 2
    assert ctx.permissions() == [("grep", [r"def (mean|median)\b"])]


async def test_grep_skips_ignored_and_binary_files(ctx, tree, engine):
    (tree / "blob.bin").write_bytes(b"def mean\x00\x01")
    out = (await GrepTool().run({"pattern": "def mean"}, ctx)).output
    assert "src/stats.py" in out and "notebooks/a.ipynb" in out
    for skipped in ("data/", "run.log", "node_modules", ".git/", "__pycache__", ".venv", "build/", "scratch",
                    "blob.bin", "checkpoints"):
        assert skipped not in out, skipped


async def test_grep_include_filters_files_with_brace_alternatives(ctx, tree, engine):
    result = await GrepTool().run({"pattern": "def mean", "include": "*.{ipynb,txt}"}, ctx)
    assert "a.ipynb" in result.output and "stats.py" not in result.output


async def test_grep_in_one_file_or_folder(ctx, tree, engine):
    assert (await GrepTool().run({"pattern": "pass", "path": "src/median.py"}, ctx)).output == (
        "src/median.py:\n  2: pass")
    assert "kept.py" in (await GrepTool().run({"pattern": "x = 1", "path": "src/deep"}, ctx)).output


async def test_no_match_says_so(ctx, tree, engine):
    assert (await GrepTool().run({"pattern": "no such text anywhere"}, ctx)).output == "No matches found."


async def test_grep_is_bounded_with_a_note(ctx, project, engine):
    (project / "many.txt").write_text("hit\n" * 150)
    result = await GrepTool().run({"pattern": "hit"}, ctx)
    assert result.output.count("  ") == 100 and "(Showing 100 of 150 matches." in result.output


async def test_an_invalid_regex_is_a_clear_error(ctx, engine):
    with pytest.raises(ToolError, match="(?i)escape special characters"):
        await GrepTool().run({"pattern": "def ("}, ctx)


async def test_a_missing_path_is_a_clear_error(ctx, engine):
    with pytest.raises(ToolError, match="Path not found: nowhere"):
        await GrepTool().run({"pattern": "x", "path": "nowhere"}, ctx)


@rg_missing
async def test_ripgrep_and_the_python_fallback_give_the_same_answer(ctx, tree, monkeypatch):
    (tree / "src" / "deep" / "more.py").write_text("def mean_squared(values):\n    return mean(values)\n")
    args = {"pattern": r"mean\w*\(", "include": "*.{py,ipynb}"}
    with_rg = await GrepTool().run(args, ctx)
    monkeypatch.setattr("opencode_nb.tool.grep.shutil.which", lambda name: None)
    without = await GrepTool().run(args, ctx)
    assert (with_rg.metadata["engine"], without.metadata["engine"]) == ("rg", "python")
    assert with_rg.output == without.output and with_rg.metadata["matches"] == 4
