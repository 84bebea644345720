import re
import shutil

import pytest

from opencode_nb.tool.glob import GlobTool
from opencode_nb.tool.grep import GrepTool, search_python
from opencode_nb.tool.list import ListTool


@pytest.fixture
def tree(project):
    (project / ".gitignore").write_text("data/\n*.log\n")
    (project / "data").mkdir()
    (project / "data" / "big.csv").write_text("def mean hidden\n")
    (project / "run.log").write_text("def mean in log\n")
    (project / "node_modules" / "x").mkdir(parents=True)
    (project / "node_modules" / "x" / "i.js").write_text("def mean\n")
    (project / "src" / "median.py").write_text("def median(values):\n    pass\n")
    (project / "notebooks").mkdir()
    (project / "notebooks" / "a.ipynb").write_text('{"cells": [{"source": "def mean_of(x)"}]}')
    return project


async def test_list_shows_a_tree_without_ignored_files(ctx, tree):
    out = (await ListTool().run({"path": "."}, ctx)).output
    assert "  src/\n    median.py\n    stats.py" in out
    assert "data" not in out and "run.log" not in out and "node_modules" not in out


async def test_list_takes_extra_ignore_patterns(ctx, tree):
    out = (await ListTool().run({"path": ".", "ignore": ["*.ipynb"]}, ctx)).output
    assert "a.ipynb" not in out and "stats.py" in out


async def test_list_is_bounded(ctx, project):
    for i in range(150):
        (project / f"f{i:03}.txt").write_text("")
    result = await ListTool().run({}, ctx)
    assert "Showing the first 100 of" in result.output and result.metadata["truncated"]


async def test_glob_finds_files_newest_first_and_skips_ignored(ctx, tree):
    result = await GlobTool().run({"pattern": "*.py"}, ctx)
    assert {line.rsplit("/", 1)[-1] for line in result.output.splitlines()} == {"stats.py", "median.py"}
    assert ctx.extra["asked"][0].patterns == ["*.py"]
    assert (await GlobTool().run({"pattern": "*.csv"}, ctx)).output == "No files found."


async def test_grep_groups_matches_by_file_with_line_numbers(ctx, tree):
    result = await GrepTool().run({"pattern": r"def (mean|median)"}, ctx)
    assert "src/median.py:\n  1: def median(values):" in result.output
    assert "src/stats.py:\n  1: def mean(values):" in result.output
    assert "data/" not in result.output and "run.log" not in result.output and "node_modules" not in result.output


async def test_grep_include_filters_files_with_brace_alternatives(ctx, tree):
    result = await GrepTool().run({"pattern": "def mean", "include": "*.{ipynb,txt}"}, ctx)
    assert "a.ipynb" in result.output and "stats.py" not in result.output


async def test_an_invalid_regex_is_a_clear_error(ctx):
    from opencode_nb.errors import ToolError

    with pytest.raises(ToolError, match="Invalid regular expression"):
        await GrepTool().run({"pattern": "def ("}, ctx)


def test_the_python_fallback_skips_binary_files(tree):
    (tree / "blob.bin").write_bytes(b"def mean\x00\x01")
    found = list(search_python(re.compile("def mean"), tree, None))
    assert {p.name for p, _, _ in found} == {"stats.py", "a.ipynb"}


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed (CI installs it)")
async def test_ripgrep_and_the_python_fallback_give_the_same_answer(ctx, tree, monkeypatch):
    args = {"pattern": r"def (mean|median)", "include": "*.{py,ipynb}"}
    with_rg = await GrepTool().run(args, ctx)
    monkeypatch.setattr("opencode_nb.tool.grep.shutil.which", lambda name: None)
    without = await GrepTool().run(args, ctx)
    assert (with_rg.metadata["engine"], without.metadata["engine"]) == ("rg", "python")
    assert with_rg.output == without.output
