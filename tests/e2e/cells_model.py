"""The model the notebook-cells browser tests talk to: it reads each request and answers as a careful agent would.

It runs inside the kernel (the tests put this folder on the kernel's path and register it as provider `e2e`),
so its answers can depend on what really happened: the plan file's path from the plan reminder, the id of a
cell it inserted from the tool result, the output of a cell it ran. The final answers quote what the model
received, which is how the tests see that a cell's output reached the model.
"""

from __future__ import annotations

import re
from typing import Any

from opencode_nb.provider.request import LLMRequest, TextBlock, ToolResultBlock

PLAN = """# Write and count a greeting

Goal: a file with a greeting, and its word count.

1. Write `hello.txt` containing the words hello plan cells.
2. Count the words in `hello.txt` with `wc -w`.
"""


def _person(block: object) -> bool:
    """A text the person (or a step cell) wrote, not a reminder the loop appends to the newest turn."""
    return isinstance(block, TextBlock) and not block.text.lstrip().startswith("<system-reminder>")


def _texts(request: LLMRequest) -> list[str]:
    return [block.text for message in request.messages for block in message.content if _person(block)]


def _results(request: LLMRequest) -> list[ToolResultBlock]:
    return [block for message in request.messages for block in message.content
            if isinstance(block, ToolResultBlock)]


def _prompt(request: LLMRequest) -> str:
    """The first text of the newest turn the person (or a step cell) started: a step cell's short line comes
    before the plan it carries."""
    for message in reversed(request.messages):
        texts = [b.text for b in message.content if _person(b)]
        if message.role == "user" and texts:
            return texts[0]
    return ""


def _since_last_user(request: LLMRequest) -> list[ToolResultBlock]:
    """The tool results of the current turn: after the newest user text."""
    last = 0
    for i, message in enumerate(request.messages):
        if message.role == "user" and any(_person(b) for b in message.content):
            last = i
    return [b for m in request.messages[last:] for b in m.content if isinstance(b, ToolResultBlock)]


def _plan_path(request: LLMRequest) -> str:
    """From the plan reminder, which names the session's own plan file."""
    texts = [b.text for m in request.messages for b in m.content if isinstance(b, TextBlock)]
    for text in texts:
        found = re.search(r"(\.opencode/plans/[\w.-]+\.md)", text)
        if found:
            return found.group(1)
    return ".opencode/plans/plan.md"


def respond(request: LLMRequest) -> Any:
    system = "\n".join(request.system)
    prompt = _prompt(request)
    done = _since_last_user(request)
    names = [r.name for r in done]
    if "You are the plan agent" in system:
        if "write" not in names:
            return {"text": "Writing the plan.", "tool_calls": [
                {"name": "write", "input": {"path": _plan_path(request), "content": PLAN}}]}
        if "plan_exit" not in names:
            return {"text": "The plan is ready.", "tool_calls": [{"name": "plan_exit", "input": {}}]}
        return {"text": "Saved."}
    step = re.match(r"Step (\d+) of plan", prompt)
    if step and not done:
        if step.group(1) == "1":
            return {"tool_calls": [{"name": "bash", "input": {
                "command": "printf 'hello plan cells' > hello.txt", "description": "Write the greeting"}}]}
        return {"tool_calls": [{"name": "bash", "input": {"command": "wc -w < hello.txt",
                                                          "description": "Count the words"}}]}
    if step:
        return {"text": f"Step {step.group(1)} is done: {done[-1].output.strip()[:80]}"}
    if "add a cell" in prompt.lower():
        if "notebook_edit" not in names:
            return {"text": "Adding the cell.", "tool_calls": [{"name": "notebook_edit", "input": {
                "action": "insert", "cell_type": "code", "source": "print(6 * 7)"}}]}
        if "notebook_run" not in names:
            inserted = next(r for r in done if r.name == "notebook_edit")
            cell_id = re.search(r"Inserted \w+ cell (\S+) ", inserted.output).group(1)
            return {"text": "Running it.", "tool_calls": [{"name": "notebook_run", "input": {"cell_ids": [cell_id]}}]}
        ran = next(r for r in done if r.name == "notebook_run")
        printed = re.search(r"\b42\b", ran.output)
        return {"text": f"The new cell printed {printed.group(0) if printed else 'nothing I could read'}."}
    return {"text": "Done."}
