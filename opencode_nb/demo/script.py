"""What the built-in scripted model does in the demo: the moves a good team of agents makes on this task.

The build agent sends explore to survey the project, switches to plan mode to agree a fix, then carries
out the approved plan. Turns are chosen per agent from the request, so the script does not depend on
the order in which the loop happens to ask.
"""

from __future__ import annotations

from typing import Any

from ..provider.request import LLMRequest
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
        turn = self.turns[agent].pop(0) if self.turns[agent] else {"text": "Done."}
        if turn == "write-plan":
            return {"text": "The bug: `mean()` divides by n - 1. Writing the plan.",
                    "tool_calls": [{"name": "write", "input": {"path": _plan_path(request), "content": (
                        "# Fix the inflated average\n\n1. In `stats.py`, make `mean()` divide by `len(values)`.\n"
                        "2. Run `python check_stats.py` and confirm it passes.\n")}}]}
        return turn
