"""How far a run of several steps has got, as one block in the cell that runs them, updated in place.

Right after an approval ("Run the steps now") or from `%agent plan run`, the running cell shows one list of
the steps it runs, each marked as waiting, running, ticked, failed or stopped, between a line saying what runs
and (when all went well) a line saying it is done. A step's own story (its live view, its transcript) is
shown in its cell, or under the block when there is no extension to fill that cell.

The HTML is prose that the page wraps between words: a `pre` would be wrapped again by JupyterLab inside
words. The plain-text twin has one line per step, for terminals and for a notebook read without its HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ...tool.support.plandoc import short
from ...views.markdown import escape
from ...views.render import WRAP
from .store import Plan

Mark = Literal["waiting", "running", "done", "failed", "stopped"]

MARKS: dict[Mark, str] = {"waiting": "·", "running": "▶", "done": "✓", "failed": "✗", "stopped": "■"}
"""The sign before a step, in both twins."""
COLORS: dict[Mark, str] = {"waiting": "var(--jp-ui-font-color2,#757575)", "running": "var(--jp-brand-color1,#1976d2)",
                           "done": "var(--jp-success-color1,#2e7d32)", "failed": "var(--jp-error-color1,#c62828)",
                           "stopped": "var(--jp-warn-color1,#ef6c00)"}
STEP_CHARS = 100
"""Of a step's instruction in its line: the whole of it is in the step's cell."""


@dataclass
class StepsProgress:
    """The block of one run of steps: `start` shows it, each change to a step updates it in place."""

    plan: Plan
    numbers: list[int]
    lead: str
    """What runs and where, above the list."""
    instructions: dict[int, str] = field(default_factory=dict)
    """Each step's instruction as its cell holds it (the plan's text where the cell has none)."""
    shown_in_cells: bool = False
    """Whether each step's run is shown in its own cell (the extension fills it) rather than below."""
    marks: dict[int, Mark] = field(default_factory=dict)
    ending: str = ""
    handle: Any = None

    def start(self) -> None:
        from IPython.display import display

        self.marks = {number: "waiting" for number in self.numbers}
        self.handle = display(self.bundle(), raw=True, display_id=True)

    def mark(self, number: int, mark: Mark) -> None:
        self.marks[number] = mark
        self._update()

    def end(self, ending: str) -> None:
        self.ending = ending
        self._update()

    def _update(self) -> None:
        if self.handle is not None:
            self.handle.update(self.bundle(), raw=True)

    def bundle(self) -> dict[str, str]:
        return {"text/html": self.html(), "text/plain": self.text()}

    def _rows(self) -> list[tuple[Mark, str, str]]:
        total = len(self.plan.doc.steps)
        rows = []
        for number in self.numbers:
            mark = self.marks.get(number, "waiting")
            where = "  (shown in its cell below)" if self.shown_in_cells and mark != "waiting" else ""
            instruction = self.instructions.get(number) or self.plan.doc.step(number).text
            rows.append((mark, f"Step {number} of {total}", short(instruction, STEP_CHARS) + where))
        return rows

    def text(self) -> str:
        lines = [self.lead, *(f"  {MARKS[mark]} {name} — {what}" for mark, name, what in self._rows())]
        return "\n".join([*lines, self.ending] if self.ending else lines)

    def html(self) -> str:
        items = "".join(
            f'<li style="margin:1px 0;padding-left:1.4em;text-indent:-1.4em">'
            f'<span style="color:{COLORS[mark]};display:inline-block;width:1.4em;text-indent:0">{MARKS[mark]}</span>'
            f"<b>{escape(name)}</b> — {escape(what)}</li>"
            for mark, name, what in self._rows())
        ending = f'<div style="margin-top:2px">{escape(self.ending)}</div>' if self.ending else ""
        return (f'<div class="ocnb-plan-progress" style="white-space:normal;{WRAP};margin:2px 0">'
                f"<div>{escape(self.lead)}</div>"
                f'<ul style="list-style:none;margin:2px 0;padding-left:0.6em">{items}</ul>{ending}</div>')
