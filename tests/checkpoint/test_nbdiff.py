"""A notebook's diff says which cells were added, removed or changed, with a changed cell's source as a unified
diff and its outputs counted, never the notebook's JSON; a version that is not a readable notebook is said so."""

from __future__ import annotations

import nbformat

from opencode_nb.checkpoint.nbdiff import notebook_diff


def saved(nb: nbformat.NotebookNode) -> bytes:
    return nbformat.writes(nb).encode()


def two_versions() -> tuple[bytes, bytes]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Sales"), nbformat.v4.new_code_cell("total = 1\nprint(total)"),
                nbformat.v4.new_code_cell("old = 1")]
    before = saved(nb)
    nb.cells[1].source = "total = 2\nprint(total)"
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="2\n" * 500)]
    del nb.cells[2]
    nb.cells.append(nbformat.v4.new_code_cell("plot(total)"))
    return before, saved(nb)


def test_a_changed_cell_is_named_by_index_and_first_line_with_its_source_diff():
    before, after = two_versions()
    text = notebook_diff("sales.ipynb", before, after)
    assert text.startswith("notebook sales.ipynb: 1 cell changed, 1 cell added, 1 cell removed\n"), text
    assert "cell 2 (code) changed: total = 2" in text
    assert "-total = 1\n+total = 2\n" in text
    assert "cell 3 (code) removed: old = 1" in text and "cell 3 (code) added: plot(total)" in text


def test_outputs_are_counted_not_dumped():
    before, after = two_versions()
    text = notebook_diff("sales.ipynb", before, after)
    assert "outputs: none → 1 (stream)" in text
    assert "2\n2\n" not in text and '"cell_type"' not in text and '"outputs"' not in text


def test_a_cell_matched_by_id_whose_outputs_alone_changed_says_only_that():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("df.head()")]
    before = saved(nb)
    nb.cells[0].outputs = [nbformat.v4.new_output("error", ename="KeyError", evalue="x", traceback=[])]
    nb.cells[0].execution_count = 7
    text = notebook_diff("a.ipynb", before, saved(nb))
    assert text == "notebook a.ipynb: 1 cell changed\ncell 1 (code) changed: df.head()\n" \
                   "outputs: none → 1 (error KeyError)\n", text


def test_a_new_notebook_lists_its_cells_and_a_deleted_one_what_it_held():
    before, _ = two_versions()
    assert notebook_diff("n.ipynb", None, before).startswith("notebook n.ipynb (new): 3 cells added\n")
    assert "cell 1 (markdown) removed: # Sales" in notebook_diff("n.ipynb", before, None)


def test_a_version_that_is_not_a_readable_notebook_is_said_in_one_line_not_dumped():
    before, _ = two_versions()
    text = notebook_diff("n.ipynb", before, b'{"cells": [{"cell_type": "code", "source": 1')
    assert text.count("\n") == 1 and "the version after the turn is not a readable notebook" in text, text
    assert '"cell_type"' not in text


def test_a_secret_in_a_cell_is_hidden(monkeypatch):
    from opencode_nb import secrets

    monkeypatch.setattr(secrets, "redact", lambda text: text.replace("sk-live-123", "[redacted]"))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("key = None")]
    before = saved(nb)
    nb.cells[0].source = "key = 'sk-live-123'"
    assert "sk-live-123" not in notebook_diff("k.ipynb", before, saved(nb))


def test_a_patch_is_cut_into_files_by_their_real_names_not_by_lines_inside_a_hunk():
    from opencode_nb.checkpoint.text import patch_sections

    patch = ('diff --git "a/q\\"x.txt" "b/q\\"x.txt"\nnew file mode 100644\nindex 0000000..e69de29\n'
             "diff --git a/b c.txt b/b c.txt\ndeleted file mode 100644\n--- a/b c.txt\n+++ /dev/null\n"
             "@@ -1 +0,0 @@\n-+++ b/evil.txt\n"
             "diff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ\n")
    sections = patch_sections(patch)
    assert [path for path, _ in sections] == ['q"x.txt', "b c.txt", "img.png"]
    assert "".join(text for _, text in sections) == patch
