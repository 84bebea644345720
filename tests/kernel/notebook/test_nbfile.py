"""Cell edits on the notebook file: what they touch, what they leave byte for byte, and where the file is."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest

from opencode_nb.kernel.notebook import nbfile


def write_notebook(path: Path, *sources: str, minor: int = 5) -> bytes:
    nb = nbformat.v4.new_notebook()
    nb.nbformat_minor = minor
    for i, source in enumerate(sources):
        cell = nbformat.v4.new_markdown_cell(source[2:]) if source.startswith("# ") else nbformat.v4.new_code_cell(
            source)
        if minor >= 5:
            cell.id = f"id{i}"
        else:
            cell.pop("id", None)
        nb.cells.append(cell)
    if sources and not sources[0].startswith("# "):
        nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="one\ntwo\n")]
        nb.cells[0].execution_count = 3
    text = nbformat.writes(nb) + "\n" if minor >= 5 else json.dumps(nb, indent=1, sort_keys=True,
                                                                      ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
    return path.read_bytes()


def edit(path: Path, change) -> object:
    doc = nbfile.load(path)
    result = change(doc)
    nbfile.save(path, doc)
    return result


def test_changing_a_cell_and_back_leaves_the_file_byte_for_byte_as_jupyter_wrote_it(tmp_path: Path):
    path = tmp_path / "a.ipynb"
    original = write_notebook(path, "x = 1\nprint(x)", "# Title", "y = 2")
    edit(path, lambda doc: nbfile.replace(doc, "id2", {"source": "y = 3"}))
    assert path.read_bytes() != original
    edit(path, lambda doc: nbfile.replace(doc, "id2", {"source": "y = 2"}))
    assert path.read_bytes() == original


def test_a_change_writes_what_nbformat_would_write_and_the_result_is_valid(tmp_path: Path):
    path = tmp_path / "a.ipynb"
    write_notebook(path, "x = 1", "# Title", "y = 2")
    ids = edit(path, lambda doc: nbfile.insert(doc, [{"cell_type": "markdown", "source": "## New\ntext",
                                                      "metadata": {"opencode_nb": {"session": "ses_1"}}}], "id0"))
    edit(path, lambda doc: nbfile.replace(doc, "id2", {"outputs": [
        {"output_type": "stream", "name": "stdout", "text": "a\nb\n"},
        {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"},
         "metadata": {}}], "execution_count": None}))
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert path.read_text(encoding="utf-8") == nbformat.writes(nb) + "\n"
    assert [c.source for c in nb.cells] == ["x = 1", "## New\ntext", "Title", "y = 2"]
    assert nb.cells[1].id == ids[0][0] and nb.cells[1].metadata["opencode_nb"] == {"session": "ses_1"}
    assert nb.cells[3].outputs[1]["data"]["image/png"] == "iVBORw0KGgo="


def test_delete_returns_the_cells_with_their_places_and_restore_puts_them_back_under_their_ids(tmp_path: Path):
    path = tmp_path / "a.ipynb"
    original = write_notebook(path, "x = 1", "# Title", "y = 2")
    deleted = edit(path, lambda doc: nbfile.delete(doc, ["id2", "id0"]))
    assert [(c["id"], i) for c, i in deleted] == [("id0", 0), ("id2", 2)]
    assert deleted[0][0]["outputs"][0]["text"] == "one\ntwo\n" and deleted[0][0]["execution_count"] == 3
    for cell, index in deleted:
        edit(path, lambda doc, cell=cell, index=index: nbfile.restore(doc, cell, index))
    assert path.read_bytes() == original


def test_an_unknown_id_is_a_key_error_and_nothing_changes(tmp_path: Path):
    path = tmp_path / "a.ipynb"
    original = write_notebook(path, "x = 1")
    doc = nbfile.load(path)
    with pytest.raises(KeyError):
        nbfile.delete(doc, ["id0", "nope"])
    assert [c["id"] for c in doc.cells] == ["id0"]
    assert path.read_bytes() == original


def test_a_notebook_without_ids_gets_positional_ones_that_the_first_write_stores(tmp_path: Path):
    path = tmp_path / "old.ipynb"
    write_notebook(path, "x = 1", "y = 2", minor=4)
    doc = nbfile.load(path)
    assert doc.ids_added and [c["id"] for c in doc.cells] == ["cell-0", "cell-1"]
    assert [c["id"] for c in nbfile.load(path).cells] == ["cell-0", "cell-1"], "the same ids until it changes"
    nbfile.replace(doc, "cell-1", {"source": "y = 3"})
    nbfile.save(path, doc)
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat_minor == 5 and [c.id for c in nb.cells] == ["cell-0", "cell-1"]


def test_a_file_saved_by_someone_else_meanwhile_is_not_overwritten(tmp_path: Path):
    path = tmp_path / "a.ipynb"
    write_notebook(path, "x = 1")
    doc = nbfile.load(path)
    nbfile.replace(doc, "id0", {"source": "x = 2"})
    theirs = path.read_text().replace("x = 1", "x = 9 ")
    path.write_text(theirs)
    with pytest.raises(FileExistsError):
        nbfile.save(path, doc)
    assert path.read_text() == theirs
    assert not [p for p in tmp_path.iterdir() if p.name != "a.ipynb"], "no temporary file left behind"


def test_reading_cuts_long_text_and_names_images_instead_of_sending_them(tmp_path: Path):
    cell = {"id": "a", "cell_type": "code", "source": ["print(", "1)"], "metadata": {}, "execution_count": 1,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["x" * 30]},
                        {"output_type": "display_data", "metadata": {},
                         "data": {"image/png": "A" * 400, "text/plain": ["<Figure>"]}}]}
    view = nbfile.cell_view(cell, max_output_chars=10)
    assert view["source"] == "print(1)"
    assert view["outputs"][0]["text"] == "x" * 10 + "…[20 more characters]"
    assert view["outputs"][1]["data"] == {"image/png": "[image/png: 300 bytes]", "text/plain": "<Figure>"}


def test_the_notebook_is_the_servers_then_vs_codes_then_the_one_the_environment_names(tmp_path: Path):
    (tmp_path / "b.ipynb").write_text("{}")
    env = {"OPENCODE_NB_NOTEBOOK": "b.ipynb"}
    assert nbfile.notebook_file({}, env, tmp_path) == tmp_path / "b.ipynb"
    assert nbfile.notebook_file({"__vsc_ipynb_file__": "/x/v.ipynb"}, env, tmp_path) == Path("/x/v.ipynb")
    server = {**env, "JPY_SESSION_NAME": "/srv/s.ipynb"}
    assert nbfile.notebook_file({"__vsc_ipynb_file__": "/x/v.ipynb"}, server, tmp_path) == Path("/srv/s.ipynb")
    assert nbfile.notebook_file({}, {"JPY_SESSION_NAME": "console-1"}, tmp_path) is None
    assert nbfile.notebook_file({}, {}, tmp_path) is None


def test_the_indent_and_the_permissions_of_the_file_are_kept(tmp_path: Path):
    path = tmp_path / "a.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1", id="k")])
    path.write_text(json.dumps(nb, indent=2, sort_keys=True) + "\n")
    os.chmod(path, 0o640)
    edit(path, lambda doc: nbfile.replace(doc, "k", {"source": "x = 2"}))
    assert path.read_text().startswith('{\n  "cells": [')
    assert (path.stat().st_mode & 0o777) == 0o640
