"""What the built-in scripted model does in the demo: the moves a good agent makes on this task."""

from __future__ import annotations

from typing import Any

DEMO_PROMPT = ("The average temperature in summarise() looks too high. Find the bug in this project, fix it, "
               "check the fix, and keep a todo list while you work.")


def demo_turns() -> list[dict[str, Any]]:
    return [
        {"text": "I'll plan the work first.",
         "tool_calls": [{"name": "todowrite", "input": {"todos": [
             {"content": "Find how the average is computed", "status": "in_progress", "priority": "high"},
             {"content": "Fix the bug", "status": "pending", "priority": "high"},
             {"content": "Run the self-check", "status": "pending", "priority": "medium"}]}}]},
        {"text": "Let me look at the project and where the mean is defined.",
         "tool_calls": [{"name": "read", "input": {"path": "README.md"}},
                        {"name": "grep", "input": {"pattern": r"def (mean|summarise)", "include": "*.py"}}]},
        {"tool_calls": [{"name": "read", "input": {"path": "stats.py"}}]},
        {"text": "`mean` divides by `len(values) - 1`, which inflates the average. It should divide by the "
                 "number of values.",
         "tool_calls": [
             {"name": "todowrite", "input": {"todos": [
                 {"content": "Find how the average is computed", "status": "completed", "priority": "high"},
                 {"content": "Fix the bug", "status": "in_progress", "priority": "high"},
                 {"content": "Run the self-check", "status": "pending", "priority": "medium"}]}},
             {"name": "edit", "input": {"path": "stats.py", "old_string": "return sum(values) / (len(values) - 1)",
                                        "new_string": "return sum(values) / len(values)"}}]},
        {"tool_calls": [{"name": "bash", "input": {"command": "python check_stats.py",
                                                   "description": "Run the project's self-check"}}]},
        {"tool_calls": [{"name": "todowrite", "input": {"todos": [
            {"content": "Find how the average is computed", "status": "completed", "priority": "high"},
            {"content": "Fix the bug", "status": "completed", "priority": "high"},
            {"content": "Run the self-check", "status": "completed", "priority": "medium"}]}}]},
        {"text": "Fixed: `mean()` in `stats.py:7` divided by `len(values) - 1`; it now divides by `len(values)`. "
                 "`python check_stats.py` passes and the 7-day summary reports a mean of 8.86 °C."},
    ]
