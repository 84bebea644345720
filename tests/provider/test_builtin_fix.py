"""`scripted/demo` on a Fix or Explain prompt, built as the kernel builds it (the real context of a cell that failed
in a real IPython shell): it corrects a wrong column or a misspelt name from the context alone, keeps the cell's
quotes, answers Explain in its three parts, says plainly when an error is not one it plays, and does not propose
again what the person rejected."""

# ruff: noqa: F811  (the tests take the imported `shell` fixture by name)
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from opencode_nb.kernel.fix.context import context_text
from opencode_nb.kernel.fix.failures import FailureLog
from opencode_nb.kernel.fix.runs import Kind, instructions
from opencode_nb.kernel.notebook.filecells import FileCells
from opencode_nb.provider.builtin import DemoModel
from opencode_nb.provider.catalog import model_info
from opencode_nb.provider.request import LLMMessage, LLMRequest, TextBlock, ToolCallBlock, ToolResultBlock
from opencode_nb.tool.notebook_read import snapshot_text
from tests.kernel.fix.shells import ipython, shell  # noqa: F401  (fixtures, shared with tests/kernel/fix)

LOAD = ("import pandas as pd\n"
        "sales = pd.DataFrame({'region': ['north', 'south', 'north'], 'units': [3, 5, 2],\n"
        "                      'revenue_eur': [12.5, 30.0, 7.25]})")
GROUPED = 'by_region = sales.groupby("region")["revenue"].sum()\nby_region'
BUILD = "You are the build agent."


@dataclass
class Host:
    """What `context_text` reads of the notebook agent."""

    shell: Any
    failures: FailureLog
    notebook: FileCells




async def prompt(shell: Any, tmp_path: Path, kind: Kind, cells: list[tuple[str | None, str]]) -> tuple[str, FileCells]:
    """Run the cells (an id of None: run as a headless runner does, without one); the last must fail. Returns the
    prompt the kernel sends for `kind` about it, and the notebook file."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source, **({"id": cell_id} if cell_id else {})) for cell_id, source in cells]
    nbformat.write(nb, tmp_path / "a.ipynb")
    for cell_id, source in cells:
        shell.run_cell(source, store_history=True, **({"cell_id": cell_id} if cell_id else {}))
    failure = shell.failures.last()
    assert failure is not None and failure.source == cells[-1][1]
    notebook = FileCells(tmp_path / "a.ipynb")
    context = await context_text(Host(shell, shell.failures, notebook), failure)
    return instructions(kind).format(label=failure.label, error=failure.name) + "\n\n" + context, notebook


def request(*messages: LLMMessage) -> LLMRequest:
    return LLMRequest(model=model_info("scripted", "demo"), system=[BUILD], messages=list(messages))


def user(*texts: str) -> LLMMessage:
    return LLMMessage(role="user", content=[TextBlock(text=t) for t in texts])


def called(turn: dict[str, Any], n: int) -> tuple[LLMMessage, LLMMessage]:
    """The assistant message of `turn`'s tool call, and a tool message answering it as notebook_edit would."""
    [call] = turn["tool_calls"]
    block = ToolCallBlock(id=f"call_{n}", name=call["name"], input=call["input"])
    said = (f"Proposed change {n} to cell {call['input'].get('cell_id')}; the person will accept or reject it — do "
            "not run the cell before it is accepted. You are told the decision at the start of your next turn.")
    return (LLMMessage(role="assistant", content=[TextBlock(text=turn.get("text", "")), block]),
            LLMMessage(role="tool", content=[ToolResultBlock(call_id=block.id, name=call["name"], output=said)]))


demo = DemoModel()


async def test_fix_proposes_the_closest_column_keeping_the_quotes_then_says_what_it_did(shell: Any, tmp_path: Path):
    text, _ = await prompt(shell, tmp_path, "fix", [("load", LOAD), ("fail", GROUPED)])
    first = demo(request(user("Fix cell [fail]: KeyError", text)))
    [call] = first["tool_calls"]
    assert call == {"name": "notebook_edit", "input": {
        "action": "replace", "cell_id": "fail",
        "source": 'by_region = sales.groupby("region")["revenue_eur"].sum()\nby_region'}}
    assert "`sales` has no column `'revenue'`; the closest it has is `'revenue_eur'`" in first["text"]
    last = demo(request(user("Fix cell [fail]: KeyError", text), *called(first, 1)))
    assert "tool_calls" not in last
    assert last["text"].startswith("The cell asked for a column `'revenue'` that `sales` does not have.")
    assert "turns `'revenue'` into `'revenue_eur'`" in last["text"] and "accept it" in last["text"]
    assert 2 <= last["text"].count(". ") + 1 <= 3, "two or three sentences"


async def test_explain_answers_in_three_parts_with_the_corrected_line(shell: Any, tmp_path: Path):
    text, _ = await prompt(shell, tmp_path, "explain", [("load", LOAD), ("fail", "total = sales['Revenue'].sum()")])
    answer = demo(request(user(text)))
    assert "tool_calls" not in answer
    said = answer["text"]
    assert said.index("**What went wrong**") < said.index("**Why**") < said.index("**What to try**")
    assert "`region`, `units`, `revenue_eur`" in said
    assert "```python\ntotal = sales['revenue_eur'].sum()\n```" in said


async def test_a_misspelt_name_is_corrected_to_the_closest_name_bound_above(shell: Any, tmp_path: Path):
    text, _ = await prompt(shell, tmp_path, "fix", [("a", "total_units = 10"), ("b", "share = 3 / totl_units")])
    [call] = demo(request(user(text)))["tool_calls"]
    assert call["input"] == {"action": "replace", "cell_id": "b", "source": "share = 3 / total_units"}


async def test_another_error_is_not_played_and_a_real_model_is_suggested(shell: Any, tmp_path: Path):
    kinds: tuple[Kind, ...] = ("fix", "explain")
    for kind in kinds:
        text, _ = await prompt(shell, tmp_path, kind, [("z", "ratio = 1 / 0")])
        answer = demo(request(user(text)))
        assert "tool_calls" not in answer
        assert "offline demo model" in answer["text"] and "ZeroDivisionError" in answer["text"]
        assert "anthropic/claude-sonnet-4-6" in answer["text"]


async def test_a_rejected_proposal_is_not_proposed_again(shell: Any, tmp_path: Path):
    cells: list[tuple[str | None, str]] = [
        ("load", "import pandas as pd\nsales = pd.DataFrame({'revenue_eur': [1.0], 'revenue_usd': [1.1]})"),
        ("fail", "sales['revenue'].sum()")]
    text, _ = await prompt(shell, tmp_path, "fix", cells)
    first = demo(request(user(text)))
    proposed = first["tool_calls"][0]["input"]["source"]
    history = [user(text), *called(first, 1), LLMMessage(role="assistant", content=[TextBlock(text="Proposed.")])]
    note = ("Since your last turn the person decided on the cell changes you proposed:\n"
            "- The person rejected change 1 to cell fail: nothing was changed.")
    second = demo(request(*history, user(text, note)))
    other = second["tool_calls"][0]["input"]["source"]
    assert {proposed, other} == {"sales['revenue_eur'].sum()", "sales['revenue_usd'].sum()"}
    assert "You rejected" in second["text"]
    history += [user(text, note), *called(second, 2), LLMMessage(role="assistant", content=[TextBlock(text="ok")])]
    third = demo(request(*history, user(text, note.replace("change 1", "change 2"))))
    assert "tool_calls" not in third and "no other close column" in third["text"]

    thanks = demo(request(*history, user("Why did you not fix it?", note)))
    assert thanks["text"].startswith("Noted: You rejected change 1 to cell fail, so the cell is as it was.")


async def test_without_the_cells_id_it_reads_the_notebook_to_find_the_cell(shell: Any, tmp_path: Path):
    text, notebook = await prompt(shell, tmp_path, "fix", [(None, LOAD), (None, GROUPED)])
    assert "## The cell that failed: In [" in text
    first = demo(request(user(text)))
    assert first["tool_calls"] == [{"name": "notebook_read", "input": {}}]
    read = snapshot_text(await notebook.read(None), whole=True)
    block = ToolCallBlock(id="call_r", name="notebook_read", input={})
    step = demo(request(user(text), LLMMessage(role="assistant", content=[block]), LLMMessage(
        role="tool", content=[ToolResultBlock(call_id="call_r", name="notebook_read", output=read)])))
    [call] = step["tool_calls"]
    saved = nbformat.read(tmp_path / "a.ipynb", as_version=4)
    assert call["input"]["cell_id"] == saved.cells[1].id and '["revenue_eur"]' in call["input"]["source"]
