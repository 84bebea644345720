"""`%agent undo` takes back everything a turn did in one step: the files (whoever wrote them: bash's `sed -i`, `rm` and
generated files, the write tool, live python writing a CSV), the cells it inserted and the names it bound; `%agent
redo` brings it all back byte for byte. A file or a name the person changed after the turn is theirs: the undo asks in
the cell (and keeps theirs on "Keep mine"), and headless it refuses and names the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from .cells_support import NBOP_TOOL, SETUP, op, printed
from .frontend import FakeExtension, FakeFrontend

pytestmark = pytest.mark.timeout(180)

FILES = {"data.txt": "alpha\nbeta\ngamma\n", "old.txt": "keep me\n", "same.txt": "untouched\n"}
TURN = [
    {"tool_calls": [{"name": "bash", "input": {
        "command": "sed -i 's/beta/BETA/' data.txt && rm old.txt && seq 1 5 > gen.txt",
        "description": "edit, remove, generate"}}]},
    {"tool_calls": [{"name": "write", "input": {"path": "notes.md", "content": "# Notes\nmade by the agent\n"}}]},
    {"tool_calls": [{"name": "python", "input": {
        "code": "with open('out.csv', 'w') as out:\n    out.write('a,b\\n1,2\\n')\nrows = 2",
        "description": "write a CSV"}}]},
    op("insert", cells=[{"source": "rows * 2"}], after=None),
    {"text": "Done."},
]


def tree(root: Path) -> dict[str, bytes]:
    """Every file of the project but the person's git directory, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def start(kernel, *, extension: FakeExtension | None, env: dict[str, str] | None = None) -> FakeFrontend:
    fe = kernel(TURN, permission={"*": "allow"}, render_views=False, extension=extension, files=FILES, env=env)
    printed(fe, SETUP)
    printed(fe, NBOP_TOOL)
    return fe


def test_undo_takes_back_files_cells_and_names_and_redo_brings_them_back(kernel, tmp_path: Path):
    ext = FakeExtension(["x = 1", "%%agent\nchange the files"])
    fe = start(kernel, extension=ext)
    project = tmp_path / "project"
    git_before = {p: (project / ".git" / p).read_bytes() for p in ("HEAD",) if (project / ".git" / p).exists()}
    before = tree(project)
    assert fe.execute_cell("c1")["status"] == "ok"
    after = tree(project)
    assert after["data.txt"] == b"alpha\nBETA\ngamma\n" and "old.txt" not in after
    assert after["gen.txt"] == b"1\n2\n3\n4\n5\n" and after["out.csv"] == b"a,b\n1,2\n" and "notes.md" in after
    assert [ext.source(i) for i in ext.ids()][-1] == "rows * 2"
    assert printed(fe, "print(rows)") == "2"

    listed = printed(fe, "%agent checkpoints")
    for label in ("data.txt (+1 -1)", "old.txt (deleted)", "gen.txt (new)", "notes.md (new)", "out.csv (new)",
                  "1 inserted", "rows"):
        assert label in listed, listed
    diff = printed(fe, "%agent diff 1")
    assert "-beta" in diff and "+BETA" in diff and "+made by the agent" in diff

    report = printed(fe, "%agent undo")
    assert tree(project) == before, "every file is back byte for byte, and what the turn made is gone"
    assert report == ("Restored data.txt to how it was before this run.\nRecreated old.txt, which this run deleted.\n"
                      "Removed gen.txt, notes.md and out.csv, which this run created.\n"
                      "Took out the cell this run inserted.\nUnbound out and rows."), report
    assert [ext.source(i) for i in ext.ids()] == ["x = 1", "%%agent\nchange the files"]
    assert printed(fe, "print('rows' in globals())") == "False"
    assert "undone" in printed(fe, "%agent checkpoints")
    assert {p: (project / ".git" / p).read_bytes() for p in git_before} == git_before
    assert not (project / ".git" / "index").exists(), "the person's git index is never written"

    redone = printed(fe, "%agent redo")
    assert tree(project) == after, "redo puts every file back as the turn left it"
    assert redone == ("Put back this run's changes to data.txt.\n"
                      "Put back gen.txt, notes.md and out.csv, which this run created.\n"
                      "Removed old.txt again, as this run did.\nPut back the cell this run inserted.\n"
                      "Put back out and rows as this run left them."), redone
    assert [ext.source(i) for i in ext.ids()][-1] == "rows * 2"
    assert printed(fe, "print(rows)") == "2"
    assert printed(fe, "%agent redo").startswith("Nothing to redo")

    printed(fe, "%agent undo")
    assert tree(project) == before, "a redone turn can be undone again"


def test_a_file_the_person_edited_since_is_overwritten_only_on_a_yes(kernel, tmp_path: Path):
    ext = FakeExtension(["x = 1", "%%agent\nchange the files"])
    fe = start(kernel, extension=ext)
    project = tmp_path / "project"
    assert fe.execute_cell("c1")["status"] == "ok"
    (project / "data.txt").write_text("alpha\nBETA\ngamma\nmy own line\n")
    printed(fe, "rows = 'mine'")

    report = answering(fe, "%agent undo", "Keep mine", expected=2)  # the name the person rebound, the file
    assert (project / "data.txt").read_text() == "alpha\nBETA\ngamma\nmy own line\n", "kept on Keep mine"
    assert "Kept your version of data.txt (" in report and not (project / "gen.txt").exists()
    assert printed(fe, "print(rows)") == "mine" and "Kept your value of rows (you rebound it after this run)." in report

    redone = answering(fe, "%agent redo", "Overwrite my change", expected=2)  # the same two, the other way
    assert (project / "data.txt").read_text() == "alpha\nBETA\ngamma\n"
    assert "Put back this run's changes to data.txt." in redone
    assert printed(fe, "print(rows)") == "2"
    (project / "gen.txt").write_text("the person's own\n")
    answering(fe, "%agent undo", "Overwrite my change", expected=1)
    assert not (project / "gen.txt").exists(), "overwritten (here: removed) on a yes"


def answering(fe: FakeFrontend, code: str, label: str, *, expected: int) -> str:
    """Run `code` and answer each question it asks with the button `label`; what the cell printed."""
    msg_id = fe.execute(code)
    clicked: list[str] = []
    for _ in range(expected):
        button = fe.wait_for(lambda: next((b for b in fe.buttons(label) if b not in clicked and
                                           not fe.models[b].get("disabled")), None), 30, f"a question ({label})")
        clicked.append(button)
        fe.click(button)
    assert fe.done(msg_id)["content"]["status"] == "ok"
    return fe.text(msg_id)


def test_headless_an_undo_refuses_the_file_the_person_edited_and_says_which(kernel, tmp_path: Path):
    notebook = tmp_path / "analysis.ipynb"
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("%%agent\nchange the files", id="c0"))
    nbformat.write(nb, notebook)
    fe = start(kernel, extension=None, env={"OPENCODE_NB_HEADLESS": "1", "OPENCODE_NB_NOTEBOOK": str(notebook)})
    project = tmp_path / "project"
    before = tree(project)
    assert fe.run("%%agent\nchange the files")["content"]["status"] == "ok"
    (project / "notes.md").write_text("the person's notes\n")

    report = printed(fe, "%agent undo")
    assert (project / "notes.md").read_text() == "the person's notes\n"
    assert "Kept your version of notes.md (" in report, report
    now = tree(project)
    assert {k: v for k, v in now.items() if k != "notes.md"} == {k: v for k, v in before.items() if k != "notes.md"}
    assert printed(fe, "print('rows' in globals())") == "False"


TWO_TURNS = [
    {"tool_calls": [{"name": "write", "input": {"path": "a.txt", "content": "first\n"}}]},
    {"text": "Wrote a."},
    {"tool_calls": [{"name": "write", "input": {"path": "b.txt", "content": "second\n"}},
                    {"name": "python", "input": {"code": "second = 2", "description": "bind"}}]},
    {"text": "Wrote b."},
]
PROMPTS = ("import opencode_nb.kernel as _k\n_ws = _k.current().workspace()\n"
           "print([p.text for m in _ws.sessions.messages(_k.current().session_id) if m.message.role == 'user' "
           "for p in m.parts if p.type == 'text'])")


def test_undo_to_a_turn_takes_back_it_and_every_later_one_and_the_model_no_longer_sees_them(kernel, tmp_path: Path):
    fe = kernel(TWO_TURNS, permission={"*": "allow"}, render_views=False, extension=FakeExtension(["x = 1"]))
    project = tmp_path / "project"
    assert fe.run("%%agent\nwrite a")["content"]["status"] == "ok"
    assert fe.run("%%agent\nwrite b")["content"]["status"] == "ok"
    assert printed(fe, PROMPTS) == "['write a', 'write b']"
    assert "no turn 5" in printed(fe, "%agent undo --to 5").lower()

    report = printed(fe, "%agent undo --to 1")
    assert report == "Removed a.txt and b.txt, which these 2 runs created.\nUnbound second.", report
    assert not (project / "a.txt").exists() and not (project / "b.txt").exists()
    assert printed(fe, PROMPTS) == "[]", "the history the model reads no longer holds the turns taken back"
    assert printed(fe, "print('second' in globals())") == "False"

    redone = printed(fe, "%agent redo")
    assert redone == "Put back a.txt and b.txt, which these 2 runs created.\nPut back second as these 2 runs left it."
    assert (project / "a.txt").read_text() == "first\n" and (project / "b.txt").read_text() == "second\n"
    assert printed(fe, PROMPTS) == "['write a', 'write b']"


def test_a_name_two_runs_of_the_turn_rebound_goes_back_to_the_persons_value_without_a_question(kernel):
    script = [{"tool_calls": [{"name": "python", "input": {"code": "v = 1", "description": "one"}}]},
              {"tool_calls": [{"name": "python", "input": {"code": "v = 2", "description": "two"}}]},
              {"text": "Done."}]
    fe = kernel(script, permission={"*": "allow"}, render_views=False, extension=FakeExtension(["x = 1"]))
    printed(fe, "v = 'the person\\'s'")
    assert fe.run("%%agent\nbind v twice")["content"]["status"] == "ok"
    assert printed(fe, "print(v)") == "2"
    report = printed(fe, "%agent undo")  # a question here would leave the cell waiting: the test would time out
    assert "Left as you rebound" not in report and printed(fe, "print(v)") == "the person's"
    assert "Left as you rebound" not in printed(fe, "%agent redo") and printed(fe, "print(v)") == "2"
