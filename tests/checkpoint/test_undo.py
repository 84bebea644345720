"""Undo takes back everything a turn did to files, whoever wrote them; redo puts it back.

The model is scripted: its turns run real tools (`bash` with `sed -i`, `rm` and a generated file, `write`)
on a real project, and the tests compare every file byte for byte.
"""

from __future__ import annotations

import asyncio

import pytest

from .conftest import bash, digest, open_workspace, write

TURN = [
    bash("sed -i 's/len(xs)/max(len(xs), 1)/' src/stats.py && rm notes.txt && seq 1 100 > out/gen.txt"),
    write("src/new_module.py", "VALUE = 42\n"),
    {"text": "Done."},
]


async def run(ws, session_id, text="change things"):
    return await asyncio.wait_for(ws.prompt(session_id, text), 30)


async def test_undo_restores_every_file_byte_for_byte_and_redo_puts_the_turn_back(project, tmp_path):
    (project / "out").mkdir()
    ws, _ = open_workspace(project, tmp_path / "data", TURN)
    session = ws.sessions.create()
    before = digest(project)
    await run(ws, session.id)
    after = digest(project)
    assert after != before and "src/new_module.py" in after and "out/gen.txt" in after and "notes.txt" not in after

    [turn] = ws.checkpoints.turns(session.id)
    assert {(f.path, f.status) for f in turn.files} == {
        ("src/stats.py", "modified"), ("notes.txt", "deleted"), ("out/gen.txt", "added"),
        ("src/new_module.py", "added")}
    assert "+    return sum(xs) / max(len(xs), 1)" in ws.checkpoints.diff(session.id)
    [(tool1, step1), (tool2, step2)] = ws.checkpoints.steps(session.id, 1)
    assert (tool1, tool2) == ("bash", "write")
    assert "notes.txt" in step1 and "new_module.py" not in step1 and "+VALUE = 42" in step2

    report = await ws.undo(session.id)
    assert digest(project) == before
    assert report.turns == [turn.message_id] and report.kept == [] and report.unavailable is None
    assert sorted(report.removed) == ["out/gen.txt", "src/new_module.py"]
    assert sorted(report.restored) == ["notes.txt", "src/stats.py"]
    assert report.text().startswith("Took back turn 1: restored notes.txt, src/stats.py; removed ")
    assert ws.checkpoints.turns(session.id)[0].undone
    assert ws.sessions.messages(session.id) == []  # kept aside, out of the history

    again = await ws.redo(session.id)
    assert digest(project) == after
    assert [m.message.role for m in ws.sessions.messages(session.id)][:2] == ["user", "assistant"]
    assert again.turns == [turn.message_id] and again.text().startswith("Put back turn 1")
    assert not ws.checkpoints.turns(session.id)[0].undone
    ws.close()


async def test_a_file_the_person_changed_after_the_turn_is_kept_unless_they_say_yes(project, tmp_path):
    ws, _ = open_workspace(project, tmp_path / "data", [write("src/stats.py", "AGENT\n"), {"text": "ok"}])
    session = ws.sessions.create()
    await run(ws, session.id)
    (project / "src" / "stats.py").write_text("PERSON\n")

    report = await ws.undo(session.id)
    assert (project / "src" / "stats.py").read_text() == "PERSON\n"
    [conflict] = report.kept
    assert conflict.path == "src/stats.py"
    assert "-AGENT" in conflict.diff and "+PERSON" in conflict.diff
    assert "Kept src/stats.py" in report.text()

    await ws.redo(session.id)  # nothing to put back over: the file is still the person's
    asked = []

    async def yes(conflict):
        asked.append(conflict.path)
        return True

    report = await ws.undo(session.id, confirm=yes)
    assert asked == ["src/stats.py"] and report.kept == []
    assert (project / "src" / "stats.py").read_text() == "def mean(xs):\n    return sum(xs) / len(xs)\n"
    ws.close()


async def test_undo_to_a_turn_takes_back_it_and_every_later_turn(project, tmp_path):
    turns = [write("a.txt", "1\n"), {"text": "one"}, write("a.txt", "2\n"), {"text": "two"},
             bash("echo 3 > a.txt && echo b > b.txt"), {"text": "three"}]
    ws, _ = open_workspace(project, tmp_path / "data", turns)
    session = ws.sessions.create()
    for text in ("first", "second", "third"):
        await run(ws, session.id, text)
    assert [t.prompt for t in ws.checkpoints.turns(session.id)] == ["first", "second", "third"]

    report = await ws.undo(session.id, to=2)
    assert report.indexes == [2, 3]
    assert (project / "a.txt").read_text() == "1\n" and not (project / "b.txt").exists()
    assert [t.undone for t in ws.checkpoints.turns(session.id)] == [False, True, True]

    await ws.redo(session.id)
    assert (project / "a.txt").read_text() == "3\n" and (project / "b.txt").read_text() == "b\n"

    first = ws.checkpoints.turns(session.id)[0].message_id
    await ws.undo(session.id, to=first)
    assert not (project / "a.txt").exists() and not (project / "b.txt").exists()
    ws.close()


async def test_the_model_no_longer_sees_a_turn_that_was_taken_back(project, tmp_path):
    turns = [write("a.txt", "secret plan\n"), {"text": "wrote the plan"}, {"text": "fresh start"}]
    ws, provider = open_workspace(project, tmp_path / "data", turns)
    session = ws.sessions.create()
    await run(ws, session.id, "write the plan")
    await ws.undo(session.id)
    assert [m.message.role for m in ws.sessions.messages(session.id)] == []

    await run(ws, session.id, "start over")
    seen = str(provider.requests[-1].messages)
    assert "start over" in seen and "write the plan" not in seen and "secret plan" not in seen
    # a new prompt after an undo deletes what was kept aside: there is nothing left to redo
    assert (await ws.redo(session.id)).turns == []
    assert [t.prompt for t in ws.checkpoints.turns(session.id)] == ["start over"]
    ws.close()


async def test_undo_with_nothing_to_take_back_says_so(project, tmp_path):
    ws, _ = open_workspace(project, tmp_path / "data", [])
    session = ws.sessions.create()
    report = await ws.undo(session.id)
    assert report.turns == [] and report.text() == "Nothing to take back."
    assert (await ws.redo(session.id)).text() == "Nothing to put back."
    ws.close()


async def test_files_written_by_a_persons_own_tool_are_taken_back_too(project, tmp_path):
    ws, _ = open_workspace(project, tmp_path / "data", [
        {"tool_calls": [{"name": "export_report", "input": {"name": "report.csv"}}]}, {"text": "exported"}],
        {"permission": {"*": "allow", "export_report": "allow"}})

    def export_report(name: str) -> str:
        """Write the report as CSV."""
        (project / name).write_text("a,b\n1,2\n")
        (project / "src" / "stats.py").write_text("# overwritten by the export\n")
        return "written"

    ws.tools.add(export_report)
    session = ws.sessions.create()
    before = digest(project)
    await run(ws, session.id, "export")
    assert (project / "report.csv").exists()
    report = await ws.undo(session.id)
    assert digest(project) == before and report.removed == ["report.csv"] and report.restored == ["src/stats.py"]
    ws.close()


async def test_a_turn_that_creates_hundreds_of_files_is_taken_back_whole(project, tmp_path):
    ws, _ = open_workspace(project, tmp_path / "data", [
        bash("mkdir -p gen && for i in $(seq 1 700); do echo $i > gen/f$i.txt; done"), {"text": "made"}])
    session = ws.sessions.create()
    before = digest(project)
    await run(ws, session.id, "generate")
    assert len(ws.checkpoints.turns(session.id)[0].files) == 700
    report = await ws.undo(session.id)
    assert len(report.removed) == 700 and digest(project) == before and not (project / "gen").exists()
    await ws.redo(session.id)
    assert (project / "gen" / "f700.txt").read_text() == "700\n"
    ws.close()


async def test_the_sessions_own_notebook_is_left_to_the_kernel(project, tmp_path):
    (project / "work").mkdir()
    (project / "work" / "analysis.ipynb").write_text('{"cells": []}')
    ws, _ = open_workspace(project, tmp_path / "data", [
        bash("echo saved-by-lab > work/analysis.ipynb && echo x > work/out.txt"), {"text": "ok"}])
    session = ws.sessions.create(notebook="work/analysis.ipynb")
    await run(ws, session.id)
    saved = (project / "work" / "analysis.ipynb").read_text()
    assert saved != '{"cells": []}'
    report = await ws.undo(session.id)
    assert report.removed == ["work/out.txt"] and report.restored == []
    assert (project / "work" / "analysis.ipynb").read_text() == saved  # its cells are undone in the notebook
    ws.close()


@pytest.mark.parametrize("notebook", ["work/analysis.ipynb", "proj/work/analysis.ipynb", "analysis.ipynb"],
                         ids=["server-root-is-the-project", "server-root-above", "server-root-below"])
async def test_another_notebook_of_the_same_name_is_undone_like_any_file(project, tmp_path, notebook):
    """Only the session's own notebook is the kernel's to take back; one of the same name in another folder
    that the turn overwrote is a file like any other, put back and named."""
    root = project / "nbs" if notebook == "analysis.ipynb" else project
    (root / "work").mkdir(parents=True)
    for folder in ("work", "other/work"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "analysis.ipynb").write_text('{"cells": []}')
    own = "nbs/work/analysis.ipynb" if notebook == "analysis.ipynb" else "work/analysis.ipynb"
    if notebook == "analysis.ipynb":
        notebook = "work/analysis.ipynb"  # the server's root is nbs/, below the project root
    other = own.replace("work/", "other/work/")
    ws, _ = open_workspace(project, tmp_path / "data", [
        bash(f"echo lab > {own} && echo agent > {other}"), {"text": "ok"}])
    session = ws.sessions.create(notebook=notebook)
    await run(ws, session.id)
    report = await ws.undo(session.id)
    ws.close()
    assert (project / own).read_text() == "lab\n"  # the kernel's, in the open notebook
    assert (project / other).read_text() == '{"cells": []}', report.text()
    assert report.restored == [other]
