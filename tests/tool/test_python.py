"""What the model reads of a python run's rich outputs: each value or display up to 4,000 characters; past
that, its head to a line's end, how many characters are missing, and where the whole text is saved.

The code runs for real, in the person's namespace of an IPython shell in this process, so the texts are
the ones IPython's formatters give a cell (pandas frames and indexes with the display options a person
set)."""

from __future__ import annotations

import builtins
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from opencode_nb.kernel.python.live import LiveRunner
from opencode_nb.tool.base import OUTPUT_FOLDER
from opencode_nb.tool.python import MAX_DISPLAY_CHARS, PythonTool

pd = pytest.importorskip("pandas")

NOTE = re.compile(r"\n… ([\d,]+) more characters \(of ([\d,]+)\); the whole output is saved at (\S+) — read it "
                  r"with the read tool \(offset (\d+) picks up where this stops; set a limit\) or grep it")


@pytest.fixture(scope="module")
def ipython() -> Iterator[Any]:
    """IPython's shell is a process-wide singleton that takes over `__main__` and adds builtins: undone after."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    main, added = sys.modules["__main__"], {"display", "__IPYTHON__"} - set(vars(builtins))
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    yield shell
    InteractiveShell.clear_instance()
    sys.modules["__main__"] = main
    for name in added:
        vars(builtins).pop(name, None)


@pytest.fixture
def shell(ipython: Any) -> Iterator[Any]:
    """The shell with the person's pandas display options as they were, and none of a test's names left."""
    before = set(ipython.user_ns)
    yield ipython
    pd.reset_option("display")
    for name in set(ipython.user_ns) - before:
        del ipython.user_ns[name]


@pytest.fixture
def live(ctx: Any, shell: Any) -> Any:
    ctx.kernel = SimpleNamespace(language="python", notebook_path=None, user_ns=shell.user_ns,
                                 run_live=LiveRunner(shell).run)
    return ctx


def formatted(shell: Any, expression: str) -> str:
    """The text a cell shows for `expression`, from the same formatter a cell's Out uses."""
    return shell.display_formatter.format(eval(expression, shell.user_ns))[0]["text/plain"]


def saved_files(ctx: Any) -> list[Path]:
    folder = ctx.data_dir / OUTPUT_FOLDER
    return sorted(folder.iterdir()) if folder.exists() else []


def cut_of(section: str) -> tuple[str, int, int, Path, int]:
    """(the head shown, characters missing, total, saved path, offset) of one cut output."""
    match = NOTE.search(section)
    assert match is not None, section[-400:]
    missing, total = (int(g.replace(",", "")) for g in match.group(1, 2))
    return section[:match.start()], missing, total, Path(match.group(3)), int(match.group(4))


PERSON_SETUP = {
    "400 timestamps": (
        "import pandas as pd\npd.set_option('display.max_seq_items', None)\n"
        "stamps = pd.date_range('2024-01-01 08:00', periods=400, freq='h', name='taken')",
        "stamps"),
    "a wide iloc": (
        "import numpy as np, pandas as pd\npd.set_option('display.max_columns', None)\n"
        "wide = pd.DataFrame(np.arange(40 * 80).reshape(40, 80) / 7, columns=[f'sensor_{i}' for i in range(80)])",
        "wide.iloc[:25, 5:70]"),
    "a weekly resample": (
        "import numpy as np, pandas as pd\npd.set_option('display.max_rows', None)\n"
        "days = pd.date_range('2021-01-01', periods=3 * 365, freq='D')\n"
        "sales = pd.DataFrame({'units': np.arange(len(days)) % 17, 'revenue': np.arange(len(days)) * 1.25,"
        " 'returns': np.arange(len(days)) % 3}, index=days)",
        "sales.resample('W').sum()"),
}


@pytest.mark.parametrize("case", list(PERSON_SETUP))
async def test_a_long_value_is_cut_at_a_line_end_with_the_count_missing_and_the_whole_saved(live, shell, case):
    setup, expression = PERSON_SETUP[case]
    shell.run_cell(setup)
    whole = formatted(shell, expression)
    assert len(whole) > MAX_DISPLAY_CHARS, "the case must be one the model could not read in full"

    result = await PythonTool().run({"code": expression}, live)

    out = result.output.split("Out:\n", 1)[1]
    head, missing, total, path, offset = cut_of(out)
    assert total == len(whole) and missing == len(whole) - len(head)
    assert len(head) <= MAX_DISPLAY_CHARS and whole.startswith(head)
    assert whole[len(head)] == "\n", "the head ends with a whole line"
    assert whole.splitlines()[offset - 1] == whole[len(head) + 1:].splitlines()[0], "the offset is the next line"
    assert path.parent == live.data_dir / OUTPUT_FOLDER and path.read_text() == whole
    assert "…(cut)" not in result.output
    assert result.metadata.get("truncated") is None, "the tool-wide limit still bounds the whole result"


async def test_a_value_within_the_limit_is_given_whole_and_nothing_is_saved(live, shell):
    shell.run_cell("import pandas as pd\nsmall = pd.date_range('2024-01-01', periods=20, freq='D')")
    result = await PythonTool().run({"code": "small"}, live)
    assert result.output.split("Out:\n", 1)[1].startswith(formatted(shell, "small") + "\n\n")
    assert "more characters" not in result.output and saved_files(live) == []


async def test_each_long_display_is_saved_on_its_own_and_an_image_is_still_said_to_be_attached(live, shell):
    code = ("from IPython.display import display\n"
            "display({'text/plain': 'a' * 5000, 'image/png': 'iVBORw0KGgo='}, raw=True)\n"
            "display({'text/plain': '\\n'.join(f'row {i}' for i in range(2000))}, raw=True)\n"
            "print('done')")
    result = await PythonTool().run({"code": code}, live)
    first = result.output.split("Display 1:\n", 1)[1].split("\n\nDisplay 2:", 1)[0]
    second = result.output.split("Display 2:\n", 1)[1].split("\n\n", 1)[0]
    head, missing, total, path, offset = cut_of(first)
    assert (len(head), missing, total, offset) == (MAX_DISPLAY_CHARS, 1000, 5000, 1), "no line end, no space: cut"
    assert first.endswith("\n[image/png, attached]") and path.read_text() == "a" * 5000
    head, missing, total, path, offset = cut_of(second)
    rows = "\n".join(f"row {i}" for i in range(2000))
    assert path.read_text() == rows and total == len(rows) and head == rows[:len(head)]
    assert head.endswith("\nrow 512") and offset == 514, "rows 0-512 fill 3,999 characters; line 514 is row 513"
    assert len(saved_files(live)) == 2 and len(result.attachments) == 1


async def test_one_long_line_is_cut_after_a_whole_word(live, shell):
    result = await PythonTool().run({"code": "' '.join(f'word{i}' for i in range(1000))"}, live)
    whole = repr(" ".join(f"word{i}" for i in range(1000)))
    head, missing, total, path, offset = cut_of(result.output.split("Out:\n", 1)[1])
    assert whole.startswith(head) and whole[len(head)] == " " and offset == 1
    assert path.read_text() == whole and (missing, total) == (len(whole) - len(head), len(whole))


async def test_a_table_shown_as_html_is_cut_as_the_text_a_reader_sees(live, shell):
    code = ("from IPython.display import HTML\n"
            "HTML('<table>' + ''.join(f'<tr><td>city {i}</td><td>{i * 3}</td></tr>' for i in range(600))"
            " + '</table>')")
    result = await PythonTool().run({"code": code}, live)
    assert "<IPython.core.display.HTML object>" not in result.output
    head, _, total, path, _ = cut_of(result.output.split("Out:\n", 1)[1])
    whole = path.read_text()
    assert "<td>" not in whole and "| city 599 | 1797 |" in whole and total == len(whole)
    assert "| city 0 | 0 |" in head and whole.startswith(head)


async def test_a_styled_frame_is_read_as_its_table_not_as_its_default_repr(live, shell):
    shell.run_cell("import pandas as pd\nprices = pd.DataFrame({'item': ['tea', 'jam'], 'price': [3.5, 4.25]})")
    result = await PythonTool().run({"code": "prices.style.highlight_max(subset=['price'])"}, live)
    assert "Styler at 0x" not in result.output
    assert "| 1 | jam | 4.250000 |" in result.output


async def test_a_failed_run_still_tells_the_model_where_the_whole_of_what_it_displayed_is(live, shell):
    from opencode_nb.errors import ToolError

    code = "display({'text/plain': '\\n'.join(str(i) for i in range(3000))}, raw=True)\n1 / 0"
    with pytest.raises(ToolError) as error:
        await PythonTool().run({"code": code}, live)
    text = str(error.value)
    _, _, _, path, _ = cut_of(text.split("Display 1:\n", 1)[1])
    assert path.read_text() == "\n".join(str(i) for i in range(3000)) and "ZeroDivisionError" in text
