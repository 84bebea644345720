"""A plan file as steps: reading it, turning it into notebook cells, and ticking a step off.

Plans are markdown written by the plan agent, so their shape varies; three ways of writing steps are
understood, tried in this order:

- `## Step N …` headings: each section is a step (its text runs to the next heading of the same level);
- a numbered list, `1.` or `1)`: each top-level item with its indented (or lazily continued) lines;
- a checklist, `- [ ]` / `- [x]`: likewise.

Several separate lists (a "Steps" list and a "Verification" list, say) are not run together: the list
under a heading that names steps or work wins, else the first one. A numbered list that a fenced block
or a paragraph interrupts continues when the numbering does (`1.` … code … `2.`).

Ticking changes the one line that starts the step and nothing else, so the person's edits to the file
survive, and ticking twice is the same as ticking once. Everything here is pure: callers read and write.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ...errors import ToolError
from ...values import NewCell

METADATA_KEY = "opencode_nb"
"""Cells made from a plan carry `metadata[METADATA_KEY] = {"plan": PLAN_ID, "step": N}` (0 for the title)."""

HEADING_MARK = " ✓"
"""What a ticked `## Step N` heading ends with."""

FIRST_LINE_CHARS = 100
"""A step's first line is cut to this many characters in a markdown heading or a todo."""

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_STEP_HEADING = re.compile(r"^(#{1,6})[ \t]+(?:\*\*)?step[ \t]+(\d+)\b(?:\*\*)?[ \t]*[:.)\-–—]*[ \t]*(.*)$", re.I)
_NUMBERED = re.compile(r"^ ?(\d{1,3})([.)])([ \t]+)(\[[ xX]\][ \t]*)?(.*)$")
_CHECK = re.compile(r"^ ?([-*+])[ \t]+\[([ xX])\]([ \t]+|$)(.*)$")
_GOAL = re.compile(r"^(?:\*\*|__)?(goal|objective)s?(?::(?:\*\*|__)|(?:\*\*|__)?:)[ \t]*(.*)$", re.I)
_STEPS_HEADING = re.compile(r"step|plan|task|todo|implement|work|change|order|fix", re.I)
_STEP_LINE = re.compile(r"^%%agent\b(?P<args>.*)$")
_PLAN_ARG = re.compile(r"--plan(?:=|[ \t]+)(\S+)")
_STEP_ARG = re.compile(r"--step(?:=|[ \t]+)(\d+)")

StepStyle = Literal["heading", "numbered", "checklist"]


class PlanError(ToolError):
    """The plan file cannot be read as steps: says which file and what to write."""


class PlanStep(BaseModel):
    model_config = ConfigDict(frozen=True)

    number: int
    """1-based, in the order the steps are written (what `--step N` means)."""
    text: str
    """The step's instruction: its first line and continuation lines, without the list marker or tick."""
    done: bool
    line: int
    """The 0-based index of the line that starts the step: the line a tick changes."""
    style: StepStyle

    @property
    def first_line(self) -> str:
        return short(self.text)


class PlanDoc(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    """The plan file, relative to the project root (`.opencode/plans/<id>.md`)."""
    title: str
    goal: str
    steps: list[PlanStep]

    @property
    def plan_id(self) -> str:
        return plan_id_of(self.path)

    def step(self, number: int) -> PlanStep:
        """Raises PlanError naming the steps there are."""
        if not 1 <= number <= len(self.steps):
            raise PlanError(f"{self.path} has {len(self.steps)} step{'s' * (len(self.steps) != 1)}; "
                            f"there is no step {number}.")
        return self.steps[number - 1]


def plan_id_of(path: str) -> str:
    """A plan's id is its file's stem: the root session's slug (or its id)."""
    return PurePosixPath(path).stem


def progress_path(plan_path: str) -> str:
    """Where the progress of a plan's steps is kept, beside the plan (`<id>.progress.json`)."""
    path = PurePosixPath(plan_path)
    return str(path.with_name(f"{path.stem}.progress.json"))


def short(text: str, limit: int = FIRST_LINE_CHARS) -> str:
    """The first non-blank line of `text`, cut to `limit` characters."""
    line = next((row.strip() for row in text.splitlines() if row.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


# ----------------------------------------------------------------------------------------------- parsing


def parse_plan(text: str, path: str) -> PlanDoc:
    """Read a plan's title, goal and steps.

    Raises:
        PlanError: the file is empty or has no steps; the message names the file and how to write steps.
    """
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        raise PlanError(f"The plan {path} is empty: write a `# Title`, the goal, and the steps as a numbered "
                        "list (1. …, 2. …).")
    fenced = _fenced_lines(lines)
    title_at, title = _title(lines, fenced)
    steps = _heading_steps(lines, fenced) or _list_steps(lines, fenced)
    if not steps:
        raise PlanError(f"The plan {path} has no steps: write them as a numbered list (1. …, 2. …), a "
                        "checklist (- [ ] …) or `## Step N` headings.")
    goal = _goal(lines, fenced, title_at, steps[0].line)
    return PlanDoc(path=path, title=title, goal=goal, steps=steps)


def _fenced_lines(lines: list[str]) -> dict[int, int]:
    """Lines inside fenced code blocks (fence lines included), each mapped to its block's first line:
    nothing inside a block is structure."""
    inside: dict[int, int] = {}
    start: int | None = None
    fence = ""
    for i, line in enumerate(lines):
        match = _FENCE.match(line)
        if start is None and match:
            start, fence = i, match.group(1)
            inside[i] = i
        elif start is not None:
            inside[i] = start
            if line.strip().startswith(fence):
                start = None
    return inside


def _title(lines: list[str], fenced: dict[int, int]) -> tuple[int, str]:
    for i, line in enumerate(lines):
        if i not in fenced and line.startswith("# "):
            match = _HEADING.match(line)
            if match and match.group(2):
                return i, match.group(2)
    first = next(i for i, line in enumerate(lines) if line.strip())
    return first, lines[first].strip().lstrip("#").strip() or "Plan"


def _goal(lines: list[str], fenced: dict[int, int], title_at: int, first_step: int) -> str:
    """A `Goal:` line (with the rest of its paragraph), a `## Goal` section's first paragraph, or the first
    paragraph between the title and the first step."""
    for i, line in enumerate(lines):
        if i in fenced:
            continue
        match = _GOAL.match(line.strip())
        if match:
            return _paragraph([match.group(2), *lines[i + 1:]])
        heading = _HEADING.match(line)
        if heading and _GOAL.match(heading.group(2).strip("*_ ") + ":"):
            return _paragraph(lines[i + 1:])
    between = [line for i, line in enumerate(lines[title_at + 1:first_step], title_at + 1) if i not in fenced]
    return _paragraph(between, skip_structure=True)


def _paragraph(lines: list[str], *, skip_structure: bool = False) -> str:
    """The first paragraph of `lines`: consecutive non-blank lines, stopping at headings and list items."""
    out: list[str] = []
    for line in lines:
        structural = bool(_HEADING.match(line) or _NUMBERED.match(line) or _CHECK.match(line)
                          or re.match(r"^\s*[-*+][ \t]", line) or _FENCE.match(line))
        if not line.strip() or structural:
            if out:
                break
            if structural and not skip_structure:
                break
            continue
        out.append(line.strip())
    return " ".join(out)


def _heading_steps(lines: list[str], fenced: dict[int, int]) -> list[PlanStep]:
    starts = [(i, m) for i, line in enumerate(lines) if i not in fenced and (m := _STEP_HEADING.match(line))]
    steps: list[PlanStep] = []
    for n, (start, match) in enumerate(starts, 1):
        level = len(match.group(1))
        end = len(lines)
        for j in range(start + 1, len(lines)):
            heading = _HEADING.match(lines[j]) if j not in fenced else None
            if heading and len(heading.group(1)) <= level:
                end = j
                break
        head = match.group(3).strip()
        done = head.endswith("✓")
        head = head.removesuffix("✓").rstrip()
        body = textwrap.dedent("\n".join(lines[start + 1:end])).strip("\n")
        text = "\n".join(part for part in (head, body) if part).strip()
        steps.append(PlanStep(number=n, text=text or f"Step {n}", done=done, line=start, style="heading"))
    return steps


class _Item:
    def __init__(self, kind: StepStyle, number: int | None, head: str, done: bool, column: int) -> None:
        self.line = -1
        self.kind, self.number, self.head, self.done = kind, number, head, done
        self.column = column
        """Where the item's text starts: continuation lines are indented to it."""
        self.more: list[str] = []

    def text(self) -> str:
        body = "\n".join(_outdent(line, self.column) for line in self.more).strip("\n")
        return "\n".join(part for part in (self.head, body) if part).strip()


def _outdent(line: str, column: int) -> str:
    """`line` without up to `column` leading spaces (a tab counts as reaching the column)."""
    stripped = line.expandtabs(4)
    spaces = len(stripped) - len(stripped.lstrip(" "))
    return stripped[min(spaces, column):]


def _list_item(line: str) -> _Item | None:
    numbered = _NUMBERED.match(line)
    if numbered:
        box = (numbered.group(4) or "").strip().lower()
        return _Item("numbered", int(numbered.group(1)), numbered.group(5).strip(), box == "[x]",
                     numbered.end(3))
    check = _CHECK.match(line)
    if check:
        return _Item("checklist", None, check.group(4).strip(), check.group(2).lower() == "x", check.start(1) + 2)
    return None


def _list_steps(lines: list[str], fenced: dict[int, int]) -> list[PlanStep]:
    lists: list[tuple[str, list[_Item]]] = []
    """(the heading above the list, its items), in order."""
    heading = ""
    current: list[_Item] | None = None
    """The list whose last item takes the lines that follow."""
    interrupted: list[_Item] | None = None
    """A list a paragraph or code block at the margin broke off; a next item numbered on from it resumes it."""
    pending: list[str] = []
    """The lines since the interruption: the continuation of the last item if the list resumes."""
    after_blank = False
    fence_owner: bool | None = None
    """For the lines of a fenced block: True when it belongs to the current item, False when it interrupted
    the list, None when it is outside any list."""
    for i, line in enumerate(lines):
        if i in fenced and fenced[i] != i:  # inside a block: it goes where its opening line went
            if fence_owner is True and current:
                current[-1].more.append(line)
            elif fence_owner is False:
                pending.append(line)
            continue
        fence_owner = None
        item = _list_item(line) if i not in fenced else None
        if item is not None:
            item.line = i
            last = current[-1] if current else None
            if last is None and interrupted and _numbered_on(interrupted[-1], item):
                interrupted[-1].more.extend(pending)
                current, last = interrupted, interrupted[-1]
            if last is None or not (last.kind == item.kind and (item.kind == "checklist" or _numbered_on(last, item))):
                current = []
                lists.append((heading, current))
            assert current is not None
            current.append(item)
            interrupted, pending, after_blank = None, [], False
            continue
        match = _HEADING.match(line) if i not in fenced else None
        if match:
            heading, current, interrupted, pending, after_blank = match.group(2), None, None, [], False
            continue
        if current is None:
            if interrupted is not None:
                pending.append(line)
                if i in fenced:
                    fence_owner = False
            continue
        if not line.strip():
            current[-1].more.append("")
            after_blank = True
        elif line.startswith((" ", "\t")) or not after_blank:
            current[-1].more.append(line)
            after_blank = False
            if i in fenced:
                fence_owner = True
        else:
            interrupted, current, pending, after_blank = current, None, [line], False
            if i in fenced:
                fence_owner = False
    if not lists:
        return []
    chosen = next((items for head, items in lists if _STEPS_HEADING.search(head)), None) if len(lists) > 1 else None
    items = chosen or lists[0][1]
    steps = []
    for n, item in enumerate(items, 1):
        steps.append(PlanStep(number=n, text=item.text() or f"Step {n}", done=item.done, line=item.line,
                              style=item.kind))
    return steps


def _numbered_on(last: _Item, item: _Item) -> bool:
    return last.kind == item.kind == "numbered" and last.number is not None and item.number == last.number + 1


# ----------------------------------------------------------------------------------------------- ticking


def tick(text: str, path: str, number: int) -> str:
    """`text` with step `number` marked done: `- [ ]` → `- [x]`, `1. foo` → `1. [x] foo`, a heading gets ` ✓`.

    Only that step's first line changes; a step already ticked leaves the text as it was.

    Raises:
        PlanError: the plan has no such step (or no steps at all).
    """
    step = parse_plan(text, path).step(number)
    if step.done:
        return text
    lines = text.splitlines(keepends=True)
    line = lines[step.line]
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    if step.style == "checklist":
        match = _CHECK.match(body)
        assert match is not None
        at = match.start(2)  # the space between the brackets
        body = body[:at] + "x" + body[at + 1:]
    elif step.style == "numbered":
        match = _NUMBERED.match(body)
        assert match is not None
        if match.group(4):  # `1. [ ] foo`
            at = match.start(4)
            body = body[:at] + "[x]" + body[at + 3:]
        else:
            at = match.end(3)
            body = body[:at] + "[x] " + body[at:]
    else:
        body = body.rstrip() + HEADING_MARK
    lines[step.line] = body + ending
    return "".join(lines)


# ----------------------------------------------------------------------------------------------- cells


def step_source(plan_id: str, step: PlanStep) -> str:
    """A step cell's source: the magic line, then the instruction, which the person may edit."""
    return f"%%agent --plan {plan_id} --step {step.number}\n{step.text}"


def parse_step_line(first_line: str) -> tuple[str, int] | None:
    """(plan id, step) of a `%%agent --plan ID --step N` line; None for any other line."""
    match = _STEP_LINE.match(first_line.strip())
    if match is None:
        return None
    plan, step = _PLAN_ARG.search(match.group("args")), _STEP_ARG.search(match.group("args"))
    if plan is None or step is None:
        return None
    return plan.group(1), int(step.group(1))


def plan_cells(doc: PlanDoc) -> list[NewCell]:
    """The cells a plan becomes: its title and goal, then per step a heading and a step cell."""
    plan_id = doc.plan_id
    count = len(doc.steps)
    intro = [f"## {doc.title}"]
    if doc.goal:
        intro.append(doc.goal)
    intro.append(f"*Plan `{plan_id}`, {count} step{'s' * (count != 1)} (`{doc.path}`). Run the step cells below "
                 f"one by one, edit a step's instruction before running it if you like, or run what is left with "
                 f"`%agent plan run {plan_id}`.*")
    cells = [NewCell(cell_type="markdown", source="\n\n".join(intro), metadata=_meta(plan_id, 0))]
    for step in doc.steps:
        mark = HEADING_MARK if step.done else ""
        cells.append(NewCell(cell_type="markdown", source=f"### Step {step.number} — {step.first_line}{mark}",
                             metadata=_meta(plan_id, step.number)))
        cells.append(NewCell(cell_type="code", source=step_source(plan_id, step), metadata=_meta(plan_id, step.number)))
    return cells


def _meta(plan_id: str, step: int) -> dict[str, dict[str, str | int]]:
    return {METADATA_KEY: {"plan": plan_id, "step": step}}
