"""The demo's scenario on the sample project weather-stats: find why the average is too high and fix it.

build sends explore to survey the project, asks to plan first, then carries out the approved plan: an edit
behind a permission ask and the project's self-check. Each move follows from what happened so far in the
session: a declined plan goes straight to the fix, a rejected edit or a failing check is reported as such
and never as a success, and a directory without the sample says so instead of pretending to find it.

In a notebook an approved plan becomes step cells instead of being carried out at once: build then only
says the steps are ready, and each step cell's request (which names its step) gets the moves of that step.
"""

from __future__ import annotations

import re
from typing import Any

from ..request import LLMRequest, ToolResultBlock
from .history import Call, Since, first_line, last_turn, since, words

PROMPT = ("The average temperature in summarise() looks too high. Find the bug in this project, fix it, "
          "check the fix, and keep a todo list while you work.")

is_task = words(r"\b(average|mean\(|summari[sz]e|stats\.py)")
"""A prompt about the sample's inflated average starts the scenario (the demo's prompt, or a person's own)."""

NOT_FOUND = "did not find the weather-stats sample"
"""What explore reports when the directory is not the sample: build then stops instead of editing blind."""

FIX = {"path": "stats.py", "old_string": "return sum(values) / (len(values) - 1)",
       "new_string": "return sum(values) / len(values)"}
CHECK = {"command": "python check_stats.py", "description": "Run the project's self-check"}
PASSED = "all checks passed"


def todos(*states: str) -> dict[str, Any]:
    items = ["Survey the project", "Plan the fix", "Fix the bug", "Run the self-check"]
    return {"name": "todowrite", "input": {"todos": [
        {"content": c, "status": s, "priority": "high"} for c, s in zip(items, states, strict=True)]}}


SURVEY = {"text": "I'll get an overview first, then plan the fix with you.",
          "tool_calls": [todos("in_progress", "pending", "pending", "pending"),
                         {"name": "task", "input": {"description": "Survey the project", "subagent_type": "explore",
                                                    "prompt": "Survey this small Python project: list its files, "
                                                              "say what each does, and where averages are "
                                                              "computed."}}]}


def passed(check: Call) -> bool:
    return check.ok and PASSED in (check.output or "")


def build(request: LLMRequest) -> dict[str, Any] | None:
    """build's next move, or None when the session holds no prompt of this scenario."""
    step = _step_turn(request)
    if step is not None:
        return step
    if _saved_as_cells(request):
        return {"text": "The plan's two steps are saved as cells below this one, each ready to run."}
    s = since(request, is_task)
    if s is None:
        return None
    if s.answered:
        return over()
    task = s.last("task")
    if task is None:
        return SURVEY
    if not task.ok:
        return {"text": f"I stop here: the survey could not run ({first_line(task.output or '', 160)}). " + TRY}
    if NOT_FOUND in (task.output or ""):
        return {"text": "I stop here: the survey did not find the sample project this demo knows (`stats.py` with "
                        "`mean()` and `summarise()`), and I am the offline demo model, which can only play that "
                        "one scenario. " + TRY}
    edit = s.last("edit")
    if edit is None:
        enter, leave = s.last("plan_enter"), s.last("plan_exit")
        if enter is None and leave is None:
            return {"text": "The survey points at `mean()` in stats.py. Let's agree on a plan before changing "
                            "anything.",
                    "tool_calls": [todos("completed", "in_progress", "pending", "pending"),
                                   {"name": "plan_enter", "input": {}}]}
        if leave is None and enter is not None and not enter.ok:
            return {"text": "No plan, then: I'll make the fix directly.",
                    "tool_calls": [todos("completed", "completed", "in_progress", "pending"),
                                   {"name": "edit", "input": FIX}]}
        return {"text": "Carrying out the approved plan.",
                "tool_calls": [todos("completed", "completed", "in_progress", "pending"),
                               {"name": "edit", "input": FIX}]}
    if not edit.ok:
        return {"text": not_applied(edit.output or "")}
    check = s.last("bash")
    if check is None:
        return {"tool_calls": [{"name": "bash", "input": CHECK}]}
    if not passed(check):
        return {"text": "The fix is in, but the self-check did not pass, so I cannot call it done:\n\n"
                        f"```\n{(check.output or '').strip()[:400]}\n```"}
    if s.calls[-1].name != "todowrite":
        return {"tool_calls": [todos("completed", "completed", "completed", "completed")]}
    return {"text": "Fixed: `mean()` in `stats.py:7` divided by `len(values) - 1`; it now divides by "
                    "`len(values)`. `python check_stats.py` passes and the 7-day summary reports a mean of "
                    "8.86 °C."}


def not_applied(error: str) -> str:
    """What build says when its edit failed: why, in the person's terms, and what the project is left with."""
    feedback = error.partition("with the following feedback: ")[2].strip()
    if feedback:
        return (f"I did not change `stats.py`: you rejected the edit and said “{feedback}”. `mean()` still divides "
                "by `len(values) - 1`; tell me how you would like it fixed.")
    if any(word in error for word in ("rejected", "refused", "prevents you")):
        return ("I did not change `stats.py`: the edit was " + ("rejected" if "rejected" in error else "refused")
                + f" ({first_line(error, 120)}). `mean()` still divides by `len(values) - 1`, so the average is "
                "still too high. Approve the edit when you run me again, or change that line yourself.")
    if "Could not find old_string" in error:
        return ("I did not change `stats.py`: the line I meant to fix, `return sum(values) / (len(values) - 1)`, "
                "is not there. Perhaps it is fixed already; `python check_stats.py` tells.")
    return f"I did not change `stats.py`: the edit failed ({first_line(error, 160)})."


def plan(request: LLMRequest) -> dict[str, Any] | None:
    """The plan agent's next move, or None when the session holds no prompt of this scenario."""
    s = since(request, is_task)
    if s is None:
        return None
    if s.answered:
        return over()
    read = _after(s, "plan_enter", "read")
    if read is None:
        return {"text": "Reading the function to plan the fix.",
                "tool_calls": [{"name": "read", "input": {"path": "stats.py"}}]}
    if not read.ok:
        return {"text": f"I could not read `stats.py` ({first_line(read.output or '')}), so I have no plan to "
                        "offer."}
    write = s.last("write")
    if write is None:
        return {"text": "The bug: `mean()` divides by n - 1. Writing the plan.",
                "tool_calls": [{"name": "write", "input": {"path": _plan_path(request), "content": (
                    "# Fix the inflated average\n\n1. In `stats.py`, make `mean()` divide by `len(values)`.\n"
                    "2. Run `python check_stats.py` and confirm it passes.\n")}}]}
    if not write.ok:
        return {"text": f"The plan could not be saved ({first_line(write.output or '')}). Here it is instead:\n\n"
                        "1. In `stats.py`, make `mean()` divide by `len(values)`.\n"
                        "2. Run `python check_stats.py` and confirm it passes."}
    leave = s.last("plan_exit")
    if leave is None:
        return {"text": "The plan is written.", "tool_calls": [{"name": "plan_exit", "input": {}}]}
    if not leave.ok:
        return {"text": f"The plan stays as it is in `{_plan_path(request)}`: nothing was changed. Tell me what "
                        "to change in it, or run me again to carry it out."}
    return {"text": "The plan is approved."}


def explore(request: LLMRequest) -> dict[str, Any]:
    """explore's survey: its task prompt is the child session's only prompt."""
    s = since(request, lambda text: True)
    if s is None or not s.calls:
        return {"tool_calls": [{"name": "glob", "input": {"pattern": "*"}},
                               {"name": "grep", "input": {"pattern": r"def (mean|median|summarise)",
                                                          "include": "*.py"}}]}
    if s.answered:
        return {"text": "My survey is above."}
    grep = s.last("grep")
    if grep is not None and grep.ok and "stats.py" in (grep.output or ""):
        return {"text": "Three files matter: `stats.py` (mean, median, load, summarise), `check_stats.py` (a "
                        "self-check) and `readings.csv` (7 daily temperatures). Averages are computed by `mean()` "
                        "at stats.py:6, which `summarise()` calls."}
    listing = s.last("glob")
    files = ", ".join((listing.output or "").split()[:8]) if listing is not None and listing.ok else ""
    return {"text": f"I {NOT_FOUND} here: no Python file defines `mean()`, `median()` or `summarise()`."
                    + (f" Files at the top: {files}." if files else "")}


TRY = ("To see the whole scenario, run `opencode-nb demo` in a terminal or the quickstart notebook; for real "
       "answers choose a real model (`%agent models`).")


def over() -> dict[str, Any]:
    return {"text": "This session's demo scenario is finished, and I am the offline demo model: I cannot do "
                    "more than replay it. Start a new session (`%%agent --new`) to run it again. " + TRY}


def _after(s: Since, first: str, name: str) -> Call | None:
    """The newest `name` call made after the newest `first` call (or anywhere when there is none)."""
    calls = s.calls
    start = max((i for i, c in enumerate(calls) if c.name == first), default=-1)
    return next((c for c in reversed(calls[start + 1:]) if c.name == name), None)


def _plan_path(request: LLMRequest) -> str:
    for message in request.messages:
        for block in message.content:
            text = getattr(block, "text", "")
            if "Plan mode is active" in text and "your plan file, " in text:
                return text.split("your plan file, ", 1)[1].split(",", 1)[0]
    return ".opencode/plans/plan.md"


STEP_PROMPT = re.compile(r"This is step (\d+) of \d+ of the approved plan")
SAVED_AS_CELLS = "saved as cells under the calling cell"
"""What plan_exit's result says when the steps became cells (and must not be carried out now)."""

STEPS: dict[str, dict[str, Any]] = {
    "1": {"text": "Fixing `mean()` as step 1 says.", "tool_calls": [{"name": "edit", "input": FIX}]},
    "2": {"tool_calls": [{"name": "bash", "input": CHECK}]},
}
"""The first move of each step of the demo's plan."""


def _step_turn(request: LLMRequest) -> dict[str, Any] | None:
    """The build agent's move when it carries out one step of a plan saved as cells, or None."""
    texts, results = last_turn(request)
    step = next((m.group(1) for t in texts if (m := STEP_PROMPT.search(t))), None)
    if step is None:
        return None
    if not results:
        return STEPS.get(step, {"text": f"Step {step} needs nothing more from me."})
    outcome = results[-1]
    if step == "1":
        if outcome.is_error:
            return {"text": f"Step 1 is not done: the edit was not applied ({first_line(outcome.output)})."}
        return {"text": "Step 1 done: `mean()` in `stats.py` now divides by `len(values)` instead of "
                        "`len(values) - 1`."}
    if step == "2":
        if outcome.is_error or PASSED not in outcome.output:
            return {"text": f"Step 2: the self-check did not pass:\n\n```\n{outcome.output.strip()[:400]}\n```"}
        return {"text": "Step 2 done: `python check_stats.py` passes; the 7-day summary reports a mean of 8.86 °C."}
    return {"text": f"Step {step} done."}


def _saved_as_cells(request: LLMRequest) -> bool:
    """plan_exit just saved the plan as cells: the build agent must not carry it out now."""
    texts, results = last_turn(request)
    earlier = [b for m in request.messages for b in m.content if isinstance(b, ToolResultBlock)]
    return not results and any("saved as" in t and "notebook cells" in t for t in texts) and any(
        r.name == "plan_exit" and SAVED_AS_CELLS in r.output for r in earlier[-1:])
