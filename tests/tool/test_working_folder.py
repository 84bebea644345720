"""One working folder: a workspace opened in a subfolder of a repository (a notebook's folder) starts every
relative path and command there, while the repository stays the project (what is inside, the paths rules name).

As OpenCode keeps the instance's directory apart from the worktree."""

import asyncio
import os

import pytest

from opencode_nb import Workspace
from opencode_nb.provider import Scripted
from opencode_nb.tool.base import shown

from .fakes import RecordingContext


@pytest.fixture
def repo(tmp_path):
    """A git repository with its code in `src/` and a notebook's folder `play/` holding its own config."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "stats.py").write_text("def mean(values):\n    return sum(values) / len(values)\n")
    (root / "play").mkdir()
    (root / "play" / "data.csv").write_text("a,b\n1,2\n")
    (root / "play" / "opencode.yaml").write_text("model: scripted/demo\n")
    return root


def open_in(folder, tmp_path, permission=None):
    ws = Workspace(folder, {"permission": permission or {"*": "allow", "external_directory": "ask"}},
                   data_dir=tmp_path / "data", env={"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)},
                   on_ask=lambda request: "once")
    return ws


async def run_calls(ws, calls):
    """Run `calls` (one tool call per step) and return (their tool parts, every permission request asked)."""
    model = Scripted([*({"tool_calls": [call]} for call in calls), {"text": "done"}])
    ws.providers.register("scripted", model)
    asked = []
    ws.bus.subscribe("permission.asked", lambda event: asked.append(event.request))
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "go"), 20)
    parts = [p for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool"]
    return parts, asked


def test_the_workspace_knows_the_folder_it_was_opened_in_apart_from_the_repository(repo, tmp_path):
    with open_in(repo / "play", tmp_path) as ws:
        assert ws.directory == (repo / "play").resolve()
        assert ws.root == repo.resolve()


async def test_a_relative_write_lands_in_the_working_folder_and_the_card_names_it_from_there(repo, tmp_path):
    ws = open_in(repo / "play", tmp_path, {"*": "ask"})
    [part], asked = await run_calls(ws, [{"name": "write", "input": {"path": "notes.md", "content": "# notes\n"}}])
    assert (repo / "play" / "notes.md").read_text() == "# notes\n"
    assert not (repo / "notes.md").exists()
    assert part.state.status == "completed", part.state
    assert part.state.title == "notes.md"
    assert part.state.output.startswith("Created notes.md")
    # the rules still name paths from the repository's root, as OpenCode's do
    assert [(r.permission, r.patterns) for r in asked if r.permission == "edit"] == [("edit", ["play/notes.md"])]
    await ws.aclose()


async def test_rules_written_for_the_repository_decide_a_write_made_from_a_subfolder(repo, tmp_path):
    ws = open_in(repo / "play", tmp_path, {"*": "allow", "edit": {"*": "deny", "play/*": "allow"}})
    parts, _ = await run_calls(ws, [{"name": "write", "input": {"path": "kept.md", "content": "x\n"}},
                                    {"name": "write", "input": {"path": "../src/new.py", "content": "x = 1\n"}}])
    assert [p.state.status for p in parts] == ["completed", "error"]
    assert (repo / "play" / "kept.md").exists() and not (repo / "src" / "new.py").exists()
    await ws.aclose()


async def test_bash_starts_in_the_working_folder(repo, tmp_path):
    ws = open_in(repo / "play", tmp_path)
    [part], _ = await run_calls(ws, [{"name": "bash", "input": {"command": "pwd && echo hi > made.txt"}}])
    assert part.state.output.splitlines()[0] == os.path.realpath(repo / "play")
    assert (repo / "play" / "made.txt").read_text() == "hi\n"
    await ws.aclose()


async def test_a_path_elsewhere_in_the_repository_is_inside_the_project_and_named_from_the_working_folder(
        repo, tmp_path):
    ws = open_in(repo / "play", tmp_path, {"*": "ask"})
    parts, asked = await run_calls(ws, [
        {"name": "read", "input": {"path": "../src/stats.py"}},
        {"name": "edit", "input": {"path": "../src/stats.py", "old_string": "def mean", "new_string": "def average"}},
        {"name": "bash", "input": {"command": "cat ../src/stats.py > copy.py"}},
    ])
    assert [p.state.status for p in parts] == ["completed"] * 3, [p.state for p in parts]
    assert [p.state.title for p in parts[:2]] == ["../src/stats.py", "../src/stats.py"]
    assert not [r for r in asked if r.permission == "external_directory"]
    assert ("read", ["src/stats.py"]) in [(r.permission, r.patterns) for r in asked]
    assert (repo / "play" / "copy.py").read_text().startswith("def average")
    await ws.aclose()


async def test_leaving_the_repository_from_a_subfolder_still_asks_first(repo, tmp_path):
    (tmp_path / "elsewhere.txt").write_text("outside\n")
    ws = open_in(repo / "play", tmp_path)
    _, asked = await run_calls(ws, [{"name": "read", "input": {"path": "../../elsewhere.txt"}},
                                   {"name": "bash", "input": {"command": "cat ../../elsewhere.txt"}}])
    outside = [r for r in asked if r.permission == "external_directory"]
    assert len(outside) == 2
    assert all(r.patterns == [f"{tmp_path.resolve().as_posix()}/*"] for r in outside)
    await ws.aclose()


async def test_what_the_search_tools_list_can_be_given_back_as_it_is(repo, tmp_path):
    ws = open_in(repo / "play", tmp_path)
    parts, _ = await run_calls(ws, [
        {"name": "glob", "input": {"pattern": "*.csv"}},
        {"name": "grep", "input": {"pattern": "def mean", "path": ".."}},
        {"name": "list", "input": {}},
        {"name": "read", "input": {"path": "datas.csv"}},
    ])
    glob, grep, listing, missing = parts
    assert glob.state.output == "data.csv"
    assert "../src/stats.py" in grep.state.output
    assert "data.csv" in listing.state.output and listing.state.title == "."
    assert missing.state.status == "error" and "- data.csv" in missing.state.error
    await ws.aclose()


def test_a_path_is_shown_from_the_working_folder_and_absolute_outside_the_project(repo, tmp_path):
    ctx = RecordingContext(repo / "play", root=repo)
    assert shown(ctx, (repo / "play" / "notes.md").resolve()) == "notes.md"
    assert shown(ctx, (repo / "src" / "stats.py").resolve()) == "../src/stats.py"
    assert shown(ctx, (repo / "play").resolve()) == "."
    assert shown(ctx, tmp_path.resolve() / "x.txt") == (tmp_path.resolve() / "x.txt").as_posix()


def test_a_workspace_opened_at_the_root_names_paths_as_before(repo, tmp_path):
    ctx = RecordingContext(repo)
    assert shown(ctx, (repo / "src" / "stats.py").resolve()) == "src/stats.py"


async def test_the_plan_agent_working_in_a_subfolder_writes_its_plan_where_plan_exit_reads_it(repo, tmp_path):
    """The plan file lives under the repository's `.opencode/plans/`; the path the reminder gives is written from
    the working folder, so the plan agent's own edit rule lets it land there."""
    from opencode_nb.provider.builtin.weather import _plan_path

    turns = iter([lambda request: {"tool_calls": [{"name": "write", "input": {"path": _plan_path(request),
                                                                            "content": "# P\n"}}]},
                  lambda request: {"text": "written"}])

    def respond(request):
        return next(turns)(request)

    ws = open_in(repo / "play", tmp_path)
    ws.providers.register("scripted", Scripted(respond=respond))
    session = ws.sessions.create()
    await asyncio.wait_for(ws.prompt(session.id, "plan it", agent="plan"), 20)
    [part] = [p for m in ws.sessions.messages(session.id) for p in m.parts if p.type == "tool"]
    assert part.state.status == "completed", part.state
    plans = list((repo / ".opencode" / "plans").glob("*.md"))
    assert [p.read_text() for p in plans] == ["# P\n"]
    assert not (repo / "play" / ".opencode").exists()
    await ws.aclose()
