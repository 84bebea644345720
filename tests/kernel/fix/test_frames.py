"""A failed cell's traceback reduced to the person's frames: their cells and modules, and of a library only
the call they made into it and the line that raised."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from opencode_nb.kernel.fix.frames import trace_text


def test_a_wrong_column_keeps_the_cell_the_call_into_pandas_and_the_raise_and_counts_the_rest(shell: Any):
    shell.user_ns["df"] = pd.DataFrame({"amount": [1.0, 2.0]})
    shell.run_cell('x = 1\ntotal = df["revenue"].sum()', store_history=True, cell_id="c1")
    failure = shell.failures.find("c1")
    frames = failure.trace.frames
    assert frames[0].kind == "cell" and frames[0].line == 2
    assert frames[0].code == 'total = df["revenue"].sum()'
    assert all(f.kind != "internal" for f in frames)  # nothing of IPython's run_code
    assert [f.package for f in frames[1:]] == ["pandas", "pandas"]
    assert frames[1].function == "__getitem__" and frames[-1].code.startswith("raise KeyError")
    text = trace_text(failure.trace, failure.name, failure.value, {frames[0].count or 0: "Cell [c1] (In [1])"})
    assert re.sub(r"line \d+", "line N", text) == (
        "(raised while handling, or from: KeyError: 'revenue')\n"
        "Traceback (most recent call last):\n"
        "  Cell [c1] (In [1]), line N\n"
        '    total = df["revenue"].sum()\n'
        "  pandas/core/frame.py, line N, in __getitem__\n"
        "    indexer = self.columns.get_loc(key)\n"
        "  pandas/core/indexes/base.py, line N, in get_loc\n"
        "    raise KeyError(key) from err\n"
        "KeyError: 'revenue'")


def test_library_frames_between_the_persons_call_and_the_raise_are_counted_not_shown(shell: Any):
    shell.run_cell("import json\njson.loads('{bad')", store_history=True, cell_id="c5")
    failure = shell.failures.find("c5")
    text = trace_text(failure.trace, failure.name, failure.value, {})
    assert [f.kind for f in failure.trace.frames] == ["cell", "library", "library"]
    assert "inside json left out" in text
    assert failure.trace.frames[1].function == "loads" and text.endswith("line 1 column 2 (char 1)")


def test_the_persons_own_module_frames_are_kept_between_cell_and_library(shell: Any, tmp_path: Path,
                                                                         monkeypatch: Any):
    (tmp_path / "helpers_for_fix.py").write_text("def total(df):\n    return df['revenue'].sum()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    shell.user_ns["df"] = pd.DataFrame({"amount": [1.0]})
    shell.run_cell("from helpers_for_fix import total\ntotal(df)", store_history=True, cell_id="c2")
    frames = shell.failures.find("c2").trace.frames
    assert [f.kind for f in frames[:2]] == ["cell", "person"]
    assert frames[1].where.endswith("helpers_for_fix.py") and frames[1].function == "total"
    assert frames[1].code == "return df['revenue'].sum()"
    sys.modules.pop("helpers_for_fix", None)


def test_a_cell_that_does_not_compile_has_its_line_and_caret_and_no_frames(shell: Any):
    shell.run_cell("y = (1,\nprint(y", store_history=True, cell_id="c3")
    failure = shell.failures.find("c3")
    assert failure.name == "SyntaxError" and failure.trace.frames == ()
    assert "^" in failure.syntax and "SyntaxError:" in failure.syntax


def test_an_error_raised_in_the_cell_itself_has_one_frame_and_its_value(shell: Any):
    shell.run_cell("raise ValueError('\\x1b[31mred\\x1b[0m words')", store_history=True, cell_id="c4")
    failure = shell.failures.find("c4")
    assert [f.kind for f in failure.trace.frames] == ["cell"]
    assert failure.value == "red words"
