"""Without the extension the notebook is the file on disk: written headless, refused where a front end holds it.

The front end here sends no cell ids (as nbclient does), so the calling cell is found by its text.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
import yaml

from ..cells_support import NBOP_TOOL, SETUP, op, printed, tool_results

pytestmark = pytest.mark.timeout(120)

AGENT_CELL = "%%agent\nedit the notebook"


def notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    for i, source in enumerate(sources):
        nb.cells.append(nbformat.v4.new_code_cell(source, id=f"c{i}"))
    nbformat.write(nb, path)
    return path


def cells_of(path: Path) -> list[tuple[str, str]]:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    return [(c.id, c.source) for c in nb.cells]


def test_a_headless_run_reads_and_changes_the_file_around_its_calling_cell(kernel, tmp_path):
    path = notebook(tmp_path / "analysis.ipynb", "x = 1", AGENT_CELL, "print('last')")
    script = [op("insert", cells=[{"source": "y = x + 1", "metadata": {"opencode_nb": {"session": "s"}}}],
                 after=None),
              op("replace", cell_id="c0", source="x = 20", cell_type=None),
              op("delete", cell_ids=["c2"]),
              op("read"),
              {"text": "Edited."}]
    fe = kernel(script, permission={"*": "allow"}, render_views=False,
                env={"OPENCODE_NB_HEADLESS": "1", "OPENCODE_NB_NOTEBOOK": str(path)})
    printed(fe, NBOP_TOOL)
    assert fe.run(AGENT_CELL)["content"]["status"] == "ok"
    inserted, previous, deleted, snapshot = (r["result"] for r in tool_results(fe))
    assert cells_of(path) == [("c0", "x = 20"), ("c1", AGENT_CELL), (inserted[0], "y = x + 1")]
    assert previous["source"] == "x = 1" and [c["id"] for c in deleted] == ["c2"]
    assert snapshot["source"] == "file" and snapshot["path"] == str(path) and snapshot["total"] == 3
    assert snapshot["running_cell"] == "c1" and [c["running"] for c in snapshot["cells"]] == [False, True, False]
    assert nbformat.read(path, as_version=4).cells[2].metadata == {"opencode_nb": {"session": "s"}}


def test_a_headless_run_runs_cells_in_the_kernel_and_writes_their_outputs_into_the_file(kernel, tmp_path):
    path = notebook(tmp_path / "analysis.ipynb", "import sys\nprint('to stdout')\n6 * 7", "1 / 0", "print('no')",
                    AGENT_CELL)
    fe = kernel([op("run", cell_ids=["c0", "c1", "c2"]), {"text": "Ran."}], permission={"*": "allow"},
                render_views=False, env={"OPENCODE_NB_HEADLESS": "1", "OPENCODE_NB_NOTEBOOK": str(path)})
    printed(fe, NBOP_TOOL)
    assert fe.run(AGENT_CELL)["content"]["status"] == "ok"
    [run] = tool_results(fe)
    assert [r["status"] for r in run["result"]] == ["ok", "error", "aborted"]
    cells = nbformat.read(path, as_version=4).cells
    assert [o.output_type for o in cells[0].outputs] == ["stream", "execute_result"]
    assert cells[0].outputs[1].data["text/plain"] == "42" and cells[0].execution_count is None
    assert cells[1].outputs[0].ename == "ZeroDivisionError" and cells[2].outputs == []


def test_no_known_notebook_is_refused_with_what_to_set(kernel):
    fe = kernel([], render_views=False, env={"OPENCODE_NB_HEADLESS": "1"})
    printed(fe, SETUP)
    text = printed(fe, "try:\n    await nb.read()\nexcept Exception as e:\n    print(type(e).__name__, e)")
    assert text.startswith("NotebookRefused No notebook is known") and "OPENCODE_NB_NOTEBOOK" in text


def test_a_front_end_without_the_extension_is_read_from_disk_but_never_written(kernel, tmp_path):
    path = notebook(tmp_path / "analysis.ipynb", "x = 1", "y = 2")
    before = path.read_bytes()
    fe = kernel([], render_views=False, env={"JPY_SESSION_NAME": str(path)})
    printed(fe, SETUP)
    assert printed(fe, "print(agent.presence.mode, (await nb.read()).source, nb.live, nb.path)") == \
        f"interactive file False {path}"
    for call in ("nb.replace('c0', source='x = 2', cell_type=None, session_id='s')",
                 "nb.delete(['c1'], session_id='s')",
                 "nb.run(['c0'], timeout_s=5, session_id='s', on_output=print)"):
        text = printed(fe, f"try:\n    await {call}\nexcept Exception as e:\n    print(type(e).__name__, e)")
        assert text.startswith("NotebookRefused The notebook is open in a front end without the opencode_nb "
                               "JupyterLab extension"), call
        assert "Nothing was changed" in text and "jupyter labextension list" in text
    assert path.read_bytes() == before


def test_without_the_extension_one_code_cell_can_still_go_below_the_running_cell(kernel, tmp_path):
    path = notebook(tmp_path / "analysis.ipynb", "x = 1")
    fe = kernel([], render_views=False, env={"JPY_SESSION_NAME": str(path)})
    printed(fe, SETUP)
    msg_id = fe.execute("ids = await nb.insert([NewCell(source='print(x)')], after=None, session_id='s')\n"
                        "print(ids)\ntry:\n    await nb.insert([NewCell(source='again')], after=None, session_id='s')\n"
                        "except Exception as e:\n    print(type(e).__name__, e)")
    reply = fe.done(msg_id)
    text = fe.text(msg_id)
    assert "set_next_input puts this code cell below the running cell" in text
    assert "NotebookRefused" in text and "this run already added one" in text
    [payload] = reply["content"]["payload"]
    assert payload["source"] == "set_next_input" and payload["text"] == "print(x)" and payload["replace"] is False
    markdown = printed(fe, "try:\n    await nb.insert([NewCell(cell_type='markdown', source='# no')], after=None, "
                           "session_id='s')\nexcept Exception as e:\n    print(e)")
    assert "no more and no markdown" in markdown
    assert cells_of(path) == [("c0", "x = 1")]


def test_under_nbclient_the_agent_inserts_below_its_cell_in_the_file(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    project = tmp_path / "project"
    project.mkdir()
    script = [op("insert", cells=[{"source": "print('added by the agent')"}], after=None), {"text": "Added."}]
    (project / "opencode.yaml").write_text(yaml.safe_dump({"model": "scripted/t", "permission": {"*": "allow"},
                                                           "provider": {"scripted": {"script": script}}}))
    path = notebook(project / "run.ipynb", "%load_ext opencode_nb\n%config Agent.probe_timeout_s = 0.3",
                    NBOP_TOOL, AGENT_CELL, "print('after')")
    for name in [k for k in os.environ if k.startswith("OPENCODE_NB_") or k == "JPY_SESSION_NAME"]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("OPENCODE_NB_NOTEBOOK", str(path))
    monkeypatch.setenv("OPENCODE_NB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(project)}}).execute()
    on_disk = cells_of(path)
    assert [source for _, source in on_disk][2:] == [AGENT_CELL, "print('added by the agent')", "print('after')"]
    assert "refused" not in json.dumps(nb.cells[2].outputs)
