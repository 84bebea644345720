"""What `%agent sessions` and `%agent permissions` print, from a real workspace: whose sessions a listing
shows, a child row as its own agent's under its parent, and the decision in force per permission before the
rules behind it."""

from __future__ import annotations

from pathlib import Path

from opencode_nb.kernel.magics import listing
from opencode_nb.provider.scripted import Scripted
from opencode_nb.workspace import Workspace

CHILD_NEVER_ANSWERS = {"agent": {"explore": {"model": "anthropic/claude-sonnet-4-5"}}}


def workspace(tmp_path: Path, config: dict | None = None) -> Workspace:
    (tmp_path / "project").mkdir(parents=True, exist_ok=True)
    ws = Workspace(tmp_path / "project", {"model": "scripted/test", "permission": {"*": "allow"}, **(config or {})},
                   data_dir=tmp_path / "data", env={"ANTHROPIC_API_KEY": ""})
    ws.providers.register("scripted", Scripted([
        {"tool_calls": [{"name": "task", "input": {"description": "Survey", "prompt": "look around",
                                                   "subagent_type": "explore"}}]},
        {"text": "The survey could not run."}]))
    return ws


async def test_all_sessions_say_they_are_the_projects_and_a_notebooks_own_say_how_to_see_the_rest(tmp_path):
    ws = workspace(tmp_path)
    here = ws.sessions.create(str(ws.directory), notebook="a.ipynb")
    other = ws.sessions.create(str(ws.directory), notebook="b.ipynb")
    for session in (here, other):
        await ws.prompt(session.id, "survey")
    mine = listing.sessions(ws, notebook="a.ipynb", current=here.id)["text/plain"]
    assert mine.startswith("Sessions of this notebook") and "%agent sessions --all" in mine and other.id not in mine
    everything = listing.sessions(ws, notebook="a.ipynb", current=here.id, everything=True)["text/plain"]
    assert everything.startswith("All sessions of this project") and other.id in everything
    assert "this notebook" not in everything
    empty = workspace(tmp_path / "empty")
    assert "yet in this project" in listing.sessions(empty, notebook=None, current=None, everything=True)["text/plain"]
    await ws.aclose()
    await empty.aclose()


async def test_a_child_row_names_its_agent_and_is_marked_once_under_its_parent(tmp_path):
    ws = workspace(tmp_path, CHILD_NEVER_ANSWERS)
    session = ws.sessions.create(str(ws.directory))
    await ws.prompt(session.id, "survey")
    [child] = ws.sessions.children(session.id)
    assert ws.sessions.activity(child.id)[0] == "", "the child never answered: its model could not start"
    row = next(line for line in listing.sessions(ws, notebook=None, current=None)["text/plain"].splitlines()
               if child.id in line)
    assert row.count("└") == 1 and row.lstrip().startswith("└")
    assert " explore " in row
    await ws.aclose()


async def test_permissions_show_the_decision_in_force_per_permission_then_the_rules_behind_it(tmp_path):
    ws = workspace(tmp_path, {"permission": {}, "agent": {"build": {"permission": {"question": "allow"}}}})
    session = ws.sessions.create(str(ws.directory))
    out = listing.permissions(ws, "build", session.id, mode="lab", policy="deny", reason="")["text/plain"]
    decided, behind = out.split("\n\n")[:2]
    assert decided.startswith("What @build may do")
    rows = {line.split()[0]: line for line in decided.splitlines()[2:]}
    assert rows["question"].split()[1] == "allow", "the later allow is in force, not the built-in deny"
    assert "live → ask" in rows["python"] and rows["python"].split()[1] == "allow"
    assert "only rules naming it" in rows["network"]
    assert behind.startswith("Rules of @build") and "last matching rule wins" in behind
    question_rows = [line for line in behind.splitlines() if " question " in line]
    assert "deny" in question_rows[0] and "overridden by rule" in question_rows[0]
    assert "allow" in question_rows[-1] and "overridden" not in question_rows[-1]
    await ws.aclose()


async def test_permissions_list_the_administrators_rules_and_say_who_may_answer(tmp_path, monkeypatch):
    from opencode_nb.config import managed

    path = tmp_path / "etc" / "managed.yaml"
    path.parent.mkdir()
    path.write_text('permission:\n  bash:\n    "rm *": deny\n    "git push *": ask\n')
    monkeypatch.setattr(managed, "AT_START", str(path))
    (tmp_path / "project").mkdir()
    ws = Workspace(tmp_path / "project", {"model": "scripted/test", "permission": {"*": "allow"}},
                   data_dir=tmp_path / "data", env={"JUPYTERHUB_USER": "alice"})
    out = listing.permissions(ws, "build", None, mode="lab", policy="deny", reason="")["text/plain"]
    held = out[out.index("The administrator's rules"):]
    assert str(path) in held and "rm *" in held and "git push *" in held and "deny" in held and "ask" in held
    assert "Only alice (this server's owner) can answer." in out
    await ws.aclose()


async def test_show_heads_a_session_with_how_its_latest_run_ended(tmp_path):
    (tmp_path / "project").mkdir()
    ws = Workspace(tmp_path / "project", {"model": "scripted/test", "permission": {"bash": "ask"}},
                   data_dir=tmp_path / "data", env={}, on_ask=lambda request: "reject")
    ws.providers.register("scripted", Scripted([
        {"text": "Done."},
        {"tool_calls": [{"name": "bash", "input": {"command": "echo hi", "description": "hi"}}]}]))
    session = ws.sessions.create(str(ws.directory))
    await ws.prompt(session.id, "hello")
    assert listing.session_state(ws, session.id) == "done"
    await ws.prompt(session.id, "say hi")
    assert listing.session_state(ws, session.id) == "rejected"
    await ws.aclose()
