"""What the built-in scripted model does in the demo: the moves a good team of agents makes on this task.

The build agent sends explore to survey the project, switches to plan mode to agree a fix, then carries
out the approved plan. Turns are chosen per agent from the request, so the script does not depend on
the order in which the loop happens to ask.

In a notebook an approved plan becomes step cells instead of being carried out at once: the build agent
then only says the steps are ready, and each step cell's request (which names its step) gets the moves
of that step: the edit for step 1, the self-check for step 2, and a final word on what came of it.
"""

from __future__ import annotations

import re
from typing import Any

from ..provider.request import LLMRequest, TextBlock, ToolResultBlock
from .data_script import MODEL as DATA_MODEL
from .data_script import DataDemoModel

DEMO_PROMPT = ("The average temperature in summarise() looks too high. Find the bug in this project, fix it, "
               "check the fix, and keep a todo list while you work.")

MARKERS = {"explore": "You are explore", "plan": "You are the plan agent", "build": "You are the build agent"}


def _todos(*states: str) -> dict[str, Any]:
    items = ["Survey the project", "Plan the fix", "Fix the bug", "Run the self-check"]
    return {"name": "todowrite", "input": {"todos": [
        {"content": c, "status": s, "priority": "high"} for c, s in zip(items, states, strict=True)]}}


def _plan_path(request: LLMRequest) -> str:
    for message in request.messages:
        for block in message.content:
            text = getattr(block, "text", "")
            if "Plan mode is active" in text and "your plan file, " in text:
                return text.split("your plan file, ", 1)[1].split(",", 1)[0]
    return ".opencode/plans/plan.md"


TURNS: dict[str, list[Any]] = {
    "build": [
        {"text": "I'll get an overview first, then plan the fix with you.",
         "tool_calls": [_todos("in_progress", "pending", "pending", "pending"),
                        {"name": "task", "input": {"description": "Survey the project", "subagent_type": "explore",
                                                   "prompt": "Survey this small Python project: list its files, "
                                                             "say what each does, and where averages are computed."}}]},
        {"text": "The survey points at `mean()` in stats.py. Let's agree on a plan before changing anything.",
         "tool_calls": [_todos("completed", "in_progress", "pending", "pending"),
                        {"name": "plan_enter", "input": {}}]},
        {"text": "Carrying out the approved plan.",
         "tool_calls": [_todos("completed", "completed", "in_progress", "pending"),
                        {"name": "edit", "input": {"path": "stats.py",
                                                   "old_string": "return sum(values) / (len(values) - 1)",
                                                   "new_string": "return sum(values) / len(values)"}}]},
        {"tool_calls": [{"name": "bash", "input": {"command": "python check_stats.py",
                                                   "description": "Run the project's self-check"}}]},
        {"tool_calls": [_todos("completed", "completed", "completed", "completed")]},
        {"text": "Fixed: `mean()` in `stats.py:7` divided by `len(values) - 1`; it now divides by `len(values)`. "
                 "`python check_stats.py` passes and the 7-day summary reports a mean of 8.86 °C."},
    ],
    "explore": [
        {"tool_calls": [{"name": "glob", "input": {"pattern": "*"}},
                        {"name": "grep", "input": {"pattern": r"def (mean|median|summarise)", "include": "*.py"}}]},
        {"text": "Three files matter: `stats.py` (mean, median, load, summarise), `check_stats.py` (a self-check) "
                 "and `readings.csv` (7 daily temperatures). Averages are computed by `mean()` at stats.py:6, "
                 "which `summarise()` calls."},
    ],
    "plan": [
        {"text": "Reading the function to plan the fix.",
         "tool_calls": [{"name": "read", "input": {"path": "stats.py"}}]},
        "write-plan",
        {"text": "The plan is written.", "tool_calls": [{"name": "plan_exit", "input": {}}]},
    ],
}


STEP_PROMPT = re.compile(r"This is step (\d+) of \d+ of the approved plan")
SAVED_AS_CELLS = "saved as cells under the calling cell"
"""What plan_exit's result says when the steps became cells (and must not be carried out now)."""

STEPS: dict[str, dict[str, Any]] = {
    "1": {"text": "Fixing `mean()` as step 1 says.",
          "tool_calls": [{"name": "edit", "input": {"path": "stats.py",
                                                    "old_string": "return sum(values) / (len(values) - 1)",
                                                    "new_string": "return sum(values) / len(values)"}}]},
    "2": {"tool_calls": [{"name": "bash", "input": {"command": "python check_stats.py",
                                                    "description": "Run the project's self-check"}}]},
}
"""The first move of each step of the demo's plan."""


def _last_user(request: LLMRequest) -> tuple[list[str], list[ToolResultBlock]]:
    """The texts of the newest user turn, and the tool results that came after it. Reminders, which the loop
    appends to every request as a user message of their own, are not a turn."""
    for index in range(len(request.messages) - 1, -1, -1):
        message = request.messages[index]
        texts = [b.text for b in message.content if isinstance(b, TextBlock)]
        if message.role == "user" and texts and not all(t.startswith("<system-reminder>") for t in texts):
            results = [b for m in request.messages[index + 1:] for b in m.content if isinstance(b, ToolResultBlock)]
            return texts, results
    return [], []


def _step_turn(request: LLMRequest) -> dict[str, Any] | None:
    """The build agent's move when it carries out one step of a plan saved as cells, or None."""
    texts, results = _last_user(request)
    step = next((m.group(1) for t in texts if (m := STEP_PROMPT.search(t))), None)
    if step is None:
        return None
    if not results:
        return STEPS.get(step, {"text": f"Step {step} needs nothing more from me."})
    outcome = results[-1]
    if step == "1":
        if outcome.is_error:
            return {"text": "Step 1 was already done: `mean()` in `stats.py` divides by `len(values)`."}
        return {"text": "Step 1 done: `mean()` in `stats.py` now divides by `len(values)` instead of "
                        "`len(values) - 1`."}
    if step == "2":
        if outcome.is_error or "passed" not in outcome.output:
            return {"text": f"Step 2: the self-check did not pass:\n\n```\n{outcome.output.strip()[:400]}\n```"}
        return {"text": "Step 2 done: `python check_stats.py` passes; the 7-day summary reports a mean of 8.86 °C."}
    return {"text": f"Step {step} done."}


def _saved_as_cells(request: LLMRequest) -> bool:
    """plan_exit just saved the plan as cells: the build agent must not carry it out now."""
    texts, results = _last_user(request)
    earlier = [b for m in request.messages for b in m.content if isinstance(b, ToolResultBlock)]
    return not results and any("saved as" in t and "notebook cells" in t for t in texts) and any(
        r.name == "plan_exit" and SAVED_AS_CELLS in r.output for r in earlier[-1:])


class DemoModel:
    """Answers each request with the next turn of the agent that asked."""

    def __init__(self) -> None:
        self.turns = {agent: list(queue) for agent, queue in TURNS.items()}
        self.data = DataDemoModel()
        """`demo/data-exploration`: the data-exploration notebook's script."""

    def __call__(self, request: LLMRequest) -> Any:
        system = "\n".join(request.system)
        if request.model.id == DATA_MODEL:
            return self.data(system)
        agent = next((a for a, marker in MARKERS.items() if marker in system), "build")
        if agent == "build":
            step = _step_turn(request)
            if step is not None:
                return step
            if _saved_as_cells(request):
                return {"text": "The plan's two steps are saved as cells below this one: run them one by one."}
        turn = self.turns[agent].pop(0) if self.turns[agent] else {"text": "Done."}
        if turn == "write-plan":
            return {"text": "The bug: `mean()` divides by n - 1. Writing the plan.",
                    "tool_calls": [{"name": "write", "input": {"path": _plan_path(request), "content": (
                        "# Fix the inflated average\n\n1. In `stats.py`, make `mean()` divide by `len(values)`.\n"
                        "2. Run `python check_stats.py` and confirm it passes.\n")}}]}
        return turn
