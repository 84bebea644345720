import asyncio
import os
import secrets
import shutil

import pytest

import opencode_nb.secrets
from opencode_nb.errors import DeniedError, ToolError
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


async def test_links_are_not_followed_out_of_the_project(ctx, project, tmp_path, engine):
    (tmp_path / "secret.txt").write_text("def mean secret\n")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "x.py").write_text("def mean secret\n")
    (project / "link.py").symlink_to(tmp_path / "secret.txt")
    (project / "linkdir").symlink_to(tmp_path / "dir")
    out = (await GrepTool().run({"pattern": "secret"}, ctx)).output
    assert out == "No matches found."


async def test_a_catastrophic_pattern_skips_the_file_within_the_bound(ctx, project, monkeypatch):
    monkeypatch.setattr("opencode_nb.tool.grep.shutil.which", lambda name: None)
    monkeypatch.setattr("opencode_nb.tool.grep.FILE_BUDGET_S", 0.3)
    (project / "slow.txt").write_text("a" * 30_000 + "!\n")
    (project / "quick.txt").write_text("aaa\n")
    started = asyncio.get_running_loop().time()
    result = await GrepTool().run({"pattern": "(a+)+$"}, ctx)
    assert asyncio.get_running_loop().time() - started < 3
    assert result.output.startswith("quick.txt:\n  1: aaa")
    assert "Skipped 1 file where matching took over 0.3 s: slow.txt" in result.output
    assert result.metadata["slow_files"] == 1


async def test_the_whole_search_stops_at_its_own_bound_and_says_so(ctx, project, monkeypatch):
    monkeypatch.setattr("opencode_nb.tool.grep.shutil.which", lambda name: None)
    monkeypatch.setattr("opencode_nb.tool.grep.FILE_BUDGET_S", 0.2)
    monkeypatch.setattr("opencode_nb.tool.grep.SEARCH_BUDGET_S", 0.5)
    for i in range(10):
        (project / f"slow{i}.txt").write_text("a" * 30_000 + "!\n")
    result = await GrepTool().run({"pattern": "(a+)+$"}, ctx)
    assert "(The search stopped after 0.5 s" in result.output and result.metadata["complete"] is False


async def test_an_invalid_include_glob_is_the_same_clear_error_for_both_engines(ctx, engine):
    with pytest.raises(ToolError, match=r"Invalid glob pattern '\*\.\[z-a\]': bad character range z-a"):
        await GrepTool().run({"pattern": "x", "include": "*.[z-a]"}, ctx)
    assert ctx.asked == []  # the model's mistake is told before anything is looked at


async def test_fifos_are_skipped_rather_than_read(ctx, project, engine):
    os.mkfifo(project / "pipe.txt")
    (project / "real.txt").write_text("hit\n")
    result = await asyncio.wait_for(GrepTool().run({"pattern": "hit"}, ctx), 10)
    assert result.output == "real.txt:\n  1: hit"


def _secret_files(project):
    """A project whose secrets live in files: `.env` at the top, a key deeper down, and a template beside them."""
    value, body = "sk_live_" + secrets.token_hex(12), secrets.token_hex(12) + "sk_live"
    (project / ".env").write_text(f"STRIPE_KEY={value}\n")
    (project / "src" / "id_deploy").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH "
                                               "PRIVATE KEY-----\n")
    (project / ".env.example").write_text("STRIPE_KEY=sk_live_placeholder\n")
    return value, body


async def test_a_folder_search_leaves_secret_files_out_names_them_and_asks_nothing(ctx, project, engine):
    value, body = _secret_files(project)
    result = await GrepTool().run({"pattern": "sk_live"}, ctx)
    assert value not in result.output and body not in result.output
    assert result.output == (
        ".env.example:\n  1: STRIPE_KEY=sk_live_placeholder\n\n(Not searched: 2 files that usually hold secrets "
        "(.env, src/id_deploy); reading them needs the person's permission. To search one, give its path as the "
        "path; that asks the person first.)")
    assert ctx.permissions() == [("grep", ["sk_live"])] and result.metadata["withheld"] == 2


async def test_an_include_glob_narrows_which_secret_files_are_named(ctx, project, engine):
    _secret_files(project)
    result = await GrepTool().run({"pattern": "sk_live", "include": "*.env"}, ctx)
    assert result.output.endswith("(Not searched: 1 file that usually holds secrets (.env); reading them needs the "
                                  "person's permission. To search one, give its path as the path; that asks the "
                                  "person first.)")


async def test_a_secret_file_given_as_the_path_asks_read_for_that_file_only(ctx, project, engine):
    _secret_files(project)
    ctx._deny.add("read")
    with pytest.raises(DeniedError):
        await GrepTool().run({"pattern": "sk_live", "path": ".env"}, ctx)
    assert ctx.asked[-1].permission == "read" and ctx.asked[-1].patterns == [".env"]
    assert ctx.asked[-1].always == [".env"], "an 'always' grants this file, not every read"


async def test_secret_files_reading_is_allowed_for_are_searched_and_their_values_learned(ctx, project, engine):
    """The tool returns what it found; every write of it (store, events, the model's history) is redacted, by
    values the search has taught the registry before returning."""
    value, body = _secret_files(project)
    ctx.permitted = lambda permission, pattern: "allow"
    result = await GrepTool().run({"pattern": "sk_live"}, ctx)
    assert "Not searched" not in result.output
    shown = opencode_nb.secrets.redact(result.output)
    assert value not in shown and body not in shown
    assert ".env:\n  1: STRIPE_KEY=[redacted: .env:STRIPE_KEY]" in shown
    assert "src/id_deploy:\n  2: [redacted: src/id_deploy]" in shown
