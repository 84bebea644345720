"""A person in JupyterLab reads sentences meant for them: a session that saves a plan as cells, runs python in
their namespace, keeps todos, hands a subagent a job whose answer is a markdown table, and then has a call
refused shows, live and in its final transcript, none of the sentences written for the model; the table is a
table, and no word is split across two lines.

The model-facing wording is imported from the code that writes it, so the test follows the wording.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from opencode_nb.errors import MODEL_TEMPLATES
from opencode_nb.tool.plan import DO_NOT_RUN, KEEP_PLANNING
from opencode_nb.tool.python import UNDO_NOTE, WHERE
from opencode_nb.tool.question import format_answers
from opencode_nb.tool.task import with_task_metadata

from .lab import Lab

pytestmark = pytest.mark.e2e

PLAN = "# Greet\n\nGoal: a greeting on disk.\n\n1. Write `hello.txt`.\n2. Count its words.\n"
ANSWER = ("The northern region sold the most this quarter, well ahead of the southern region, which recovered "
          "slowly after a difficult start; " * 4 + "\n\n| region | total |\n|---|---:|\n| north | 30 |\n"
          "| south | 12 |\n")
SENTENCE = " ".join(["the quarterly northern figures were reconciled against the warehouse ledger"] * 5)
SCRIPT_MODULE = f'''
"""The scripted model of this test: plans, then works as the build agent, then has a command refused."""
import re

from opencode_nb.kernel import current
from opencode_nb.provider.request import TextBlock, ToolResultBlock
from opencode_nb.provider.scripted import Scripted

PLAN = {PLAN!r}
ANSWER = {ANSWER!r}
TASK_PROMPT = "Sum the sales by region and explain the result."
NEXT = {{
    "plan_exit": {{"name": "python", "input": {{"code": "answer = 40 + 2\\nprint({SENTENCE!r})",
                                              "description": "Compute the answer"}}}},
    "python": {{"name": "todowrite", "input": {{"todos": [
        {{"content": "Check the **north** total in `sales.csv`", "status": "completed"}},
        {{"content": "Explain the `south` figure", "status": "in_progress"}}]}}}},
    "todowrite": {{"name": "task", "input": {{"description": "Sum by region", "prompt": TASK_PROMPT,
                                            "subagent_type": "general"}}}},
    "task": {{"name": "bash", "input": {{"command": "rm -r build", "description": "Clean the build folder"}}}},
}}


def respond(request):
    texts = [b.text for m in request.messages for b in m.content if isinstance(b, TextBlock)]
    results = [b.name for m in request.messages for b in m.content if isinstance(b, ToolResultBlock)]
    if any(t.strip() == TASK_PROMPT for t in texts):
        return {{"text": ANSWER}}
    if "You are the plan agent" in "\\n".join(request.system):
        if not results:
            path = re.search(r"\\.opencode/plans/[^\\s,]+\\.md", "\\n".join([*request.system, *texts])).group()
            return {{"tool_calls": [{{"name": "write", "input": {{"path": path, "content": PLAN}}}}]}}
        return {{"tool_calls": [{{"name": "plan_exit", "input": {{}}}}]}}
    call = NEXT.get(results[-1]) if results else None
    return {{"tool_calls": [call]}} if call else {{"text": "Done."}}


current().workspace().providers.register("scripted", Scripted(respond=respond))
'''

SPLIT_WORDS_JS = """root => {
    // Words (of 40 characters or fewer) whose letters lie on more than one line: a word split mid-word.
    const split = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let node;
    while ((node = walker.nextNode())) {
        const re = /\\S+/g;
        let m;
        while ((m = re.exec(node.textContent))) {
            if (m[0].length > 40) continue;
            const range = document.createRange();
            range.setStart(node, m.index);
            range.setEnd(node, m.index + m[0].length);
            const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
            if (tops.size > 1) split.push(m[0]);
        }
    }
    return split;
}"""
BREAK_ALL_JS = """root => [...root.querySelectorAll('.ocnb-tool *, .ocnb-transcript *')]
    .map(el => getComputedStyle(el))
    .filter(s => s.wordBreak === 'break-all' || s.overflowWrap === 'anywhere').length"""


def model_sentences() -> list[str]:
    """What only the model is told, as the code writes it."""
    task_note = with_task_metadata("", "ses_x").split("ses_x ", 1)[1].splitlines()[0]
    return [*MODEL_TEMPLATES, DO_NOT_RUN, KEEP_PLANNING, WHERE["live"], UNDO_NOTE, task_note,
            format_answers([], []).splitlines()[0], "<task_metadata>"]


def leaked(text: str) -> list[str]:
    return [sentence for sentence in model_sentences() if sentence in text]


def check_output(lab: Lab, index: int, when: str) -> None:
    """Everything in the cell's output, folded or not, read as text; the table; the wrapping."""
    out = lab.cell(index).locator(".jp-Cell-outputWrapper")
    text = out.evaluate("el => el.textContent")
    assert not leaked(text), f"{when}: model-facing text shown: {leaked(text)}"
    tables = out.locator(".ocnb-markdown table")
    assert tables.count() >= 1, f"{when}: the task's markdown table is not a table"
    assert "north" in tables.first.inner_text() and "| region |" not in text
    assert out.evaluate(BREAK_ALL_JS) == 0, f"{when}: an element breaks words anywhere"
    split = out.evaluate(SPLIT_WORDS_JS)
    assert split == [], f"{when}: words split across lines: {split[:10]}"


def saved_outputs(cell: dict[str, Any]) -> str:
    parts = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        parts += [re.sub(r"<[^>]+>", " ", data.get("text/html", "")), data.get("text/plain", ""),
                  output.get("text", "")]
    return "\n".join(parts)


def test_the_person_reads_summaries_tables_and_whole_words_never_the_models_sentences(lab: Lab) -> None:
    (lab.root / "opencode.yaml").write_text(yaml.safe_dump({
        "model": "scripted/e2e", "permission": {"bash": "ask", "python": "allow", "task": "allow",
                                                "todowrite": "allow"},
        "provider": {"scripted": {"script": [{"text": "unused"}]}}}))
    (lab.root / "person_script.py").write_text(SCRIPT_MODULE)
    lab.write_notebook("person.ipynb", ["%load_ext opencode_nb", "import person_script",
                                        "%%agent --agent plan\nPlan a greeting, then do the work."])
    nb = lab.open_notebook("person.ipynb")
    for index in (0, 1):
        lab.run_cell(index)
        lab.wait_cell_done(index)
    lab.run_cell(2, key="Control+Enter")
    agent = lab.cell(2)

    agent.locator("button.jupyter-button", has_text="Run the steps now").first.wait_for(timeout=30_000)
    agent.locator("button.jupyter-button", has_text="Run the steps now").first.click()
    reject = agent.locator("button.jupyter-button").filter(has_text=re.compile(r"^\s*Reject\s*$"))
    reject.wait_for(timeout=60_000)

    # Live, before the end: the plan, the python run, the todos and the task's answer are on screen.
    lab.wait_output(2, "Saved the plan as 2 steps in cells below")
    lab.wait_output(2, "Ran in your namespace: created answer")
    lab.wait_output(2, "@general answered")
    check_output(lab, 2, "live")

    reject.click()
    agent.locator(".ocnb-transcript").wait_for(timeout=30_000)
    lab.wait_cell_done(2)
    lab.wait_output(2, "Rejected by you")
    check_output(lab, 2, "transcript")
    assert "Do the work" not in agent.locator(".ocnb-transcript").inner_text()

    saved = lab.save()
    agent_cell = next(c for c in saved["cells"] if "".join(c["source"]).startswith("%%agent --agent plan"))
    text = saved_outputs(agent_cell)
    assert "Rejected by you" in text and "Ran in your namespace" in text
    assert not leaked(text), f"saved transcript: {leaked(text)}"
    assert json.dumps(saved).count("ocnb-transcript") >= 1
    assert nb.locator(".jp-Notebook-cell").count() > 3, "the plan's steps were saved as cells"
