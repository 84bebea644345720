import os

import pytest

from opencode_nb.errors import ToolError
from opencode_nb.tool.glob import GlobTool


def names(output: str) -> list[str]:
    return output.splitlines()


async def test_glob_finds_files_at_any_depth_and_skips_ignored_ones(ctx, tree):
    result = await GlobTool().run({"pattern": "*.py"}, ctx)
    assert sorted(names(result.output)) == ["src/deep/kept.py", "src/median.py", "src/stats.py"]
    assert ctx.permissions() == [("glob", ["*.py"])] and ctx.asked[0].always == ["*"]


async def test_glob_lists_the_newest_files_first(ctx, tree):
    for age, name in enumerate(["src/median.py", "src/stats.py", "src/deep/kept.py"]):
        os.utime(tree / name, (1_000_000 - age * 1000, 1_000_000 - age * 1000))
    assert names((await GlobTool().run({"pattern": "**/*.py"}, ctx)).output) == [
        "src/median.py", "src/stats.py", "src/deep/kept.py"]


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("src/*.py", None, ["src/median.py", "src/stats.py"]),
    ("src/**/*.py", None, ["src/deep/kept.py", "src/median.py", "src/stats.py"]),
    ("*.{md,ipynb}", None, ["README.md", "notebooks/a.ipynb"]),
    ("*.py", "src/deep", ["src/deep/kept.py"]),
    ("*.csv", None, []),
])
async def test_glob_patterns_and_paths(ctx, tree, pattern, path, expected):
    args = {"pattern": pattern} | ({"path": path} if path else {})
    result = await GlobTool().run(args, ctx)
    assert sorted(names(result.output)) == expected or (not expected and result.output.startswith("No files match"))


async def test_an_absolute_pattern_searches_its_own_folder(ctx, tree):
    result = await GlobTool().run({"pattern": f"{tree}/src/*.py"}, ctx)
    assert sorted(names(result.output)) == ["src/median.py", "src/stats.py"]


async def test_glob_is_bounded_with_a_note(ctx, project):
    for i in range(120):
        (project / f"f{i:03}.txt").write_text("")
    result = await GlobTool().run({"pattern": "*.txt"}, ctx)
    assert len(result.output.split("\n\n")[0].splitlines()) == 100
    assert "(Showing the 100 most recently modified of 120 files." in result.output


async def test_a_missing_folder_is_a_clear_error(ctx):
    with pytest.raises(ToolError, match="Directory not found: nowhere"):
        await GlobTool().run({"pattern": "*", "path": "nowhere"}, ctx)


async def test_globbing_outside_the_workspace_asks_external_directory(ctx, tmp_path):
    (tmp_path / "x.txt").write_text("")
    result = await GlobTool().run({"pattern": "*.txt", "path": str(tmp_path)}, ctx)
    assert ctx.permissions()[0] == ("external_directory", [f"{tmp_path}/*"])
    assert f"{tmp_path}/x.txt" in result.output


@pytest.mark.parametrize(("pattern", "path", "hit"), [
    ("*.py", "a/b/c.py", True), ("*.py", "c.pyc", False), ("?.py", "a.py", True), ("?.py", "ab.py", False),
    ("[ab].txt", "b.txt", True), ("[!ab].txt", "b.txt", False), ("[!ab].txt", "c.txt", True),
    ("src/*.py", "src/x/a.py", False), ("src/**/a.py", "src/a.py", True), ("src/**", "src/x/y", True),
    ("/*.md", "README.md", True), ("/*.md", "docs/x.md", False), ("*.{py,md}", "docs/x.md", True),
    ("data/*.{csv,tsv}", "data/t.tsv", True), ("a+b(1).txt", "a+b(1).txt", True),
])
def test_glob_matching_rules(pattern, path, hit):
    from pathlib import PurePosixPath

    from opencode_nb.tool.files.globpattern import glob_matcher

    assert glob_matcher(pattern)(PurePosixPath(path)) is hit


@pytest.mark.parametrize(("pattern", "why"), [
    ("[z-a].py", "bad character range z-a. A range in \\[...\\] must go upwards"),
    ("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}", "expand to more than 256 patterns"),
])
async def test_a_pattern_that_cannot_be_read_is_a_clear_error(ctx, pattern, why):
    with pytest.raises(ToolError, match=why):
        await GlobTool().run({"pattern": pattern}, ctx)
    assert ctx.asked == []


async def test_links_are_not_followed_nor_listed(ctx, project, tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.py").write_text("")
    (project / "door").symlink_to(tmp_path / "outside")
    (project / "alias.py").symlink_to(project / "src" / "stats.py")
    result = await GlobTool().run({"pattern": "**/*.py"}, ctx)
    assert names(result.output) == ["src/stats.py"]


def test_repeated_double_stars_do_not_backtrack():
    from pathlib import PurePosixPath

    from opencode_nb.tool.files.globpattern import glob_matcher

    matches = glob_matcher("**/" * 30 + "x.py")
    assert matches(PurePosixPath("a/" * 40 + "x.py")) and not matches(PurePosixPath("a/" * 40 + "y.py"))
