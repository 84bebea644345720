"""The demo's scenario for Fix and Explain on a failed cell: a wrong column name, or a misspelt variable.

It reads what a real model would read: the Fix or Explain prompt the kernel builds (`kernel/fix/runs.py`),
whose context has the failing cell (`## The cell that failed: cell [ID] (In [N])` and its source), the error
(`## The error`, its last line the exception), the variables the cell reads (`## Variables the cell reads`,
a DataFrame with its column table) and the cells above. From that text alone, never from a notebook it
knows, it finds the string the cell used that no frame it reads has as a column (or the name that is not
defined) and the closest column (or name bound above), and keeps the cell's quote style when it corrects
it. Fix proposes the corrected cell with `notebook_edit` and says what it did once the tool has answered;
Explain answers in the prompt's three parts. Any other error is not this demo's to play: it says so.

A proposal the person rejected is told to the model at the start of the next prompt; a new Fix of the same
cell then offers the next closest candidate, or says there is none, instead of proposing the same again.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..request import LLMRequest, ToolCallBlock, ToolResultBlock
from .history import first_line, prompt_texts, since

CELL_HEAD = re.compile(r"^## The cell that failed: (?P<label>.+)$", re.MULTILINE)
CELL_ID = re.compile(r"\bcell \[(?P<id>[^\]]+)\]")
FIX_ASK = "Find the cause and propose a fix."
EXPLAIN_ASK = "Explain the error to them"
DECIDED = "Since your last turn the person decided on the cell changes you proposed:"
"""How the kernel's note of the person's decisions begins (`kernel/notebook/pending.py`, `told`)."""
REJECTED = re.compile(r"The person rejected change (?P<n>\d+) to cell (?P<cell>\S+?):")
PROPOSED = re.compile(r"Proposed change (?P<n>\d+) to cell (?P<cell>\S+?)[;:.]")
FRAME_HEAD = re.compile(r"^(?P<name>[A-Za-z_]\w*): pandas DataFrame\b", re.MULTILINE)
TABLE_ROW = re.compile(r"^\| (?P<column>.+?) \| [^|]+ \|")
CELL_BLOCK = re.compile(r"^\[cell (?P<id>[^\]]+)\] ")
LITERAL = re.compile(r"""(?<![\w'"])(?P<q>['"])(?P<text>[^'"\\\n]*)(?P=q)""")
UNDEFINED = re.compile(r"name '(?P<name>\w+)' is not defined")

REAL_MODEL = ("For a real diagnosis choose a real model, e.g. `%agent fix --model anthropic/claude-sonnet-4-6` "
              "(ANTHROPIC_API_KEY) or `openai/gpt-5` (OPENAI_API_KEY); `%agent models` lists them.")
ONLY = ("I am `scripted/demo`, the offline demo model: on a failed cell I only play two cases, a wrong column "
        "name (a KeyError on a DataFrame the cell reads) and a misspelt variable (a NameError with a close name "
        "bound above).")


@dataclass(frozen=True)
class FailedCell:
    """What the prompt says about the failed cell, read back from its text."""

    kind: str
    """`fix` or `explain`."""
    label: str
    cell_id: str | None
    """None where the kernel knew no cell ids (a headless run): notebook_read finds the cell by its text."""
    source: str
    error: str
    """The exception's line: `KeyError: 'revenue'`."""
    frames: dict[str, list[str]] = field(default_factory=dict)
    """Each DataFrame the cell reads → its columns, from the describer's table."""
    bound: list[str] = field(default_factory=list)
    """Names the cells above bind, and the variables described: what a misspelt name may have meant."""


@dataclass(frozen=True)
class Correction:
    """One fix: in the cell's source, `wrong` becomes `right` (a column of `frame`, or a name bound above)."""

    what: str
    """`column` or `name`."""
    wrong: str
    right: str
    source: str
    """The cell's whole source, corrected."""
    frame: str | None = None
    others: tuple[str, ...] = ()
    """The other candidates, closest first."""
    skipped: tuple[str, ...] = ()
    """Candidates passed over because the person rejected them already."""
    source_before: str = ""

    @property
    def lines(self) -> str:
        """The corrected lines, for a snippet."""
        old = self.source_before.splitlines()
        new = self.source.splitlines()
        changed = [n for o, n in zip(old, new, strict=False) if o != n]
        return "\n".join(changed or new)


def parse(text: str) -> FailedCell | None:
    """The failed cell of a Fix or Explain prompt, or None when `text` is not one."""
    kind = "fix" if FIX_ASK in text else "explain" if EXPLAIN_ASK in text else None
    head = CELL_HEAD.search(text)
    if kind is None or head is None:
        return None
    label = head.group("label").strip()
    found = CELL_ID.search(label)
    rest = text[head.end():]
    source = ""
    if "```python\n" in rest:
        source = rest.split("```python\n", 1)[1].split("\n```", 1)[0]
    error_lines = [ln for ln in _section(text, "## The error").splitlines() if ln.strip()]
    error = error_lines[-1].strip() if error_lines else ""
    variables = _section(text, "## Variables the cell reads")
    return FailedCell(kind=kind, label=label, cell_id=found.group("id") if found else None, source=source,
                      error=error, frames=_frames(variables), bound=_bound(text, variables))


def _section(text: str, heading: str) -> str:
    """The text under the first `## ` heading that starts with `heading`, up to the next one."""
    start = text.find("\n" + heading)
    if start < 0:
        return ""
    body = text[start + 1:].split("\n", 1)
    if len(body) < 2:
        return ""
    return body[1].split("\n## ", 1)[0]


def _frames(variables: str) -> dict[str, list[str]]:
    frames: dict[str, list[str]] = {}
    heads = list(FRAME_HEAD.finditer(variables))
    for i, head in enumerate(heads):
        block = variables[head.end():heads[i + 1].start() if i + 1 < len(heads) else len(variables)]
        columns = [m.group("column").strip() for line in block.splitlines()
                   if (m := TABLE_ROW.match(line)) and m.group("column").strip() not in ("column", "---")]
        frames[head.group("name")] = columns
    return frames


def _bound(text: str, variables: str) -> list[str]:
    """Names a cell above binds (`x = …`, `for x in`, `import x`, `def x`), then those the context describes."""
    names: list[str] = []
    for source in _cells(_section(text, "## The cells above it")).values():
        for line in source.splitlines():
            stripped = line.strip()
            if stripped.startswith(("%", "!", "#")):
                continue
            names += re.findall(r"^([A-Za-z_]\w*)\s*(?:,\s*[A-Za-z_]\w*\s*)*=(?!=)", stripped)
            names += re.findall(r"^for\s+([A-Za-z_]\w*)\s+in\b", stripped)
            names += re.findall(r"^(?:def|class)\s+([A-Za-z_]\w*)", stripped)
            names += [alias.split(" as ")[-1].strip().split(".")[0]
                      for alias in re.findall(r"^(?:from\s+\S+\s+)?import\s+(.+)$", stripped)
                      for alias in alias.split(",")]
    names += [m.group(1) for m in re.finditer(r"^([A-Za-z_]\w*): ", variables, re.MULTILINE)]
    return list(dict.fromkeys(n for n in names if n.isidentifier()))


def _cells(text: str) -> dict[str, str]:
    """Cell id → source, from blocks as notebook_read writes them (`[cell ID] #N code · …`, the source, then
    `--- outputs ---` and the outputs)."""
    cells: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    in_outputs = False
    for line in text.splitlines():
        head = CELL_BLOCK.match(line)
        if head is not None:
            if current is not None:
                cells[current] = "\n".join(lines).strip("\n")
            current, lines, in_outputs = head.group("id"), [], False
        elif line.startswith("--- outputs ---"):
            in_outputs = True
        elif current is not None and not in_outputs:
            lines.append(line)
    if current is not None:
        cells[current] = "\n".join(lines).strip("\n")
    return cells


# ---------------------------------------------------------------------------------------------- diagnosing


def correct(cell: FailedCell, rejected: frozenset[str] | set[str] = frozenset()) -> Correction | None:
    """The closest correction of a wrong column or a misspelt name, skipping sources the person rejected."""
    name, _, value = cell.error.partition(": ")
    if name == "KeyError":
        return _column(cell, value, rejected)
    if name == "NameError":
        return _name(cell, value, rejected)
    return None


def _closest(word: str, choices: list[str]) -> list[str]:
    lowered = {c.lower(): c for c in reversed(choices)}
    return [lowered[m] for m in difflib.get_close_matches(word.lower(), list(lowered), n=3, cutoff=0.5)]


def _column(cell: FailedCell, value: str, rejected: frozenset[str] | set[str]) -> Correction | None:
    columns = [c for cols in cell.frames.values() for c in cols]
    for literal in dict.fromkeys(m.group("text") for m in LITERAL.finditer(cell.source)):
        if not literal or literal in columns or literal not in value:
            continue
        candidates = [c for c in _closest(literal, columns) if "'" not in c and '"' not in c]
        frame = next((f for f, cols in cell.frames.items() if candidates and candidates[0] in cols), None)
        return _pick("column", literal, candidates, rejected, cell.source, frame,
                     partial(_renamed, cell.source, literal))
    return None


def _renamed(source: str, wrong: str, right: str) -> str:
    """`source` with each string literal `wrong` made `right`, in the quotes it had."""
    def swap(found: re.Match[str]) -> str:
        return found.group("q") + right + found.group("q") if found.group("text") == wrong else found.group(0)

    return LITERAL.sub(swap, source)


def _name(cell: FailedCell, value: str, rejected: frozenset[str] | set[str]) -> Correction | None:
    found = UNDEFINED.search(value)
    if found is None:
        return None
    wrong = found.group("name")
    candidates = [c for c in _closest(wrong, cell.bound) if c != wrong]
    pattern = re.compile(rf"(?<![\w.'\"]){re.escape(wrong)}\b")
    return _pick("name", wrong, candidates, rejected, cell.source, None,
                 lambda right: pattern.sub(right, cell.source))


def _pick(what: str, wrong: str, candidates: list[str], rejected: frozenset[str] | set[str], before: str,
          frame: str | None, fixed: Callable[[str], str]) -> Correction | None:
    skipped: list[str] = []
    for i, right in enumerate(candidates):
        source = fixed(right)
        if source == before:
            continue
        if source in rejected:
            skipped.append(right)
            continue
        return Correction(what, wrong, right, source, frame, tuple(candidates[i + 1:]), tuple(skipped),
                          source_before=before)
    if skipped:
        return Correction(what, wrong, "", before, frame, (), tuple(skipped), source_before=before)
    return None


# ---------------------------------------------------------------------------------------------- the moves


def newest_prompt(request: LLMRequest) -> str:
    prompts = prompt_texts(request)
    return prompts[-1][1] if prompts else ""


def build(request: LLMRequest) -> dict[str, Any] | None:
    """The next move when the newest prompt is a Fix or Explain, else None."""
    cell = parse(newest_prompt(request))
    if cell is None:
        return None
    s = since(request, lambda text: parse(text) is not None)
    assert s is not None
    rejected = _rejected_sources(request)
    fixing = correct(cell, rejected)
    if cell.kind == "explain":
        return {"text": explain(cell, fixing)}
    if fixing is None:
        return {"text": f"{ONLY} This cell failed with `{first_line(cell.error, 160)}`, which is neither, so I have "
                        f"nothing to propose. {REAL_MODEL}"}
    if not fixing.right:
        return {"text": _nothing_left(fixing)}
    cell_id = cell.cell_id
    if cell_id is None:
        read = s.last("notebook_read")
        if read is None:
            return {"text": "The error does not name the cell's id; reading the notebook to find it.",
                    "tool_calls": [{"name": "notebook_read", "input": {}}]}
        cell_id = _find(read.output or "", cell.source) if read.ok else None
        if cell_id is None:
            why = first_line(read.output or "") if not read.ok else "no cell of the notebook has the failing text"
            return {"text": f"I could not find the failing cell in the notebook ({why}), so I propose nothing. "
                            f"The fix: {_change_words(fixing)}."}
    edit = s.last("notebook_edit")
    if edit is None:
        return {"text": _diagnosis(fixing) + f" Proposing that change for cell [{cell_id}].",
                "tool_calls": [{"name": "notebook_edit", "input": {"action": "replace", "cell_id": cell_id,
                                                                   "source": fixing.source}}]}
    return {"text": _after_edit(edit.output or "", edit.ok, fixing, cell_id)}


def acknowledged(request: LLMRequest) -> dict[str, Any] | None:
    """What the demo says to a prompt that carries the person's decisions and is no scenario's own."""
    text = newest_prompt(request)
    if DECIDED not in text:
        return None
    lines = [ln[2:] for ln in text.split(DECIDED, 1)[1].splitlines() if ln.startswith("- ")]
    said = []
    for line in lines:
        if line.startswith("The person rejected"):
            said.append(line.replace("The person rejected", "You rejected", 1).replace(": nothing was changed",
                                                                                       ", so the cell is as it was"))
        elif line.startswith("The person accepted"):
            said.append(line.replace("The person accepted", "You accepted", 1))
        else:
            said.append(line)
    return {"text": "Noted: " + " ".join(s.rstrip(".") + "." for s in said) + " I am the offline demo and play "
                    "only Fix and Explain of a wrong column or name: run `%agent fix` on a failed cell for another "
                    f"proposal, or edit the cell yourself. {REAL_MODEL}"}


def _rejected_sources(request: LLMRequest) -> set[str]:
    """The sources of the session's proposals the person rejected (told in a later prompt's note)."""
    rejected: set[str] = set()
    for _, text in prompt_texts(request):
        rejected.update(m.group("n") for m in REJECTED.finditer(text))
    if not rejected:
        return set()
    results = {b.call_id: b for m in request.messages for b in m.content if isinstance(b, ToolResultBlock)}
    sources = set()
    for message in request.messages:
        for block in message.content:
            if isinstance(block, ToolCallBlock) and block.name == "notebook_edit" and block.id in results:
                said = PROPOSED.search(results[block.id].output)
                if said is not None and said.group("n") in rejected:
                    sources.add(str(block.input.get("source", "")))
    return sources


def _find(read: str, source: str) -> str | None:
    wanted = source.strip()
    return next((cell_id for cell_id, text in _cells(read).items() if text.strip() == wanted), None)


def _diagnosis(fixing: Correction) -> str:
    if fixing.what == "column":
        frame = f"`{fixing.frame}`" if fixing.frame else "The frame"
        said = f"{frame} has no column `'{fixing.wrong}'`; the closest it has is `'{fixing.right}'`."
    else:
        said = f"`{fixing.wrong}` is not defined; the closest name bound above is `{fixing.right}`."
    if fixing.skipped:
        said += f" (You rejected `{fixing.skipped[-1]}` before.)"
    return said


def _change_words(fixing: Correction) -> str:
    if fixing.what == "column":
        return f"`'{fixing.wrong}'` → `'{fixing.right}'`"
    return f"`{fixing.wrong}` → `{fixing.right}`"


def _after_edit(output: str, ok: bool, fixing: Correction, cell_id: str) -> str:
    change = _change_words(fixing)
    if not ok:
        return f"I could not propose the change to cell [{cell_id}] ({first_line(output, 160)}); the fix is {change}."
    frame = f"`{fixing.frame}`" if fixing.frame else "the frame"
    wrong = (f"The cell asked for a column `'{fixing.wrong}'` that {frame} does not have"
             if fixing.what == "column" else f"The cell used `{fixing.wrong}`, which no cell defines")
    if "accepted it" in output or "Accepted change" in output:
        ran = "; it ran without an error" if "without an error" in output else ""
        return (f"{wrong}. My change ({change}) was accepted by policy, as nobody was present to review it{ran}. "
                "`%agent undo` takes it back.")
    if "was not applied" in output:
        return f"{wrong}. My change ({change}) was not applied: {first_line(output.split(': ', 1)[-1], 200)}"
    into = (f"`'{fixing.wrong}'` into `'{fixing.right}'`" if fixing.what == "column"
            else f"`{fixing.wrong}` into `{fixing.right}`")
    return (f"{wrong}. My change to cell [{cell_id}] turns {into} and keeps the rest of the cell as it was; "
            "accept it and the cell runs again, or reject it and nothing changes.")


def _nothing_left(fixing: Correction) -> str:
    tried = ", ".join(f"`{c}`" for c in fixing.skipped)
    return (f"You rejected {tried} for `{fixing.wrong}`, and I have no other close "
            f"{'column' if fixing.what == 'column' else 'name'} to offer, so I propose nothing this time. "
            f"Edit the cell yourself, or ask a real model. {REAL_MODEL}")


def explain(cell: FailedCell, fixing: Correction | None) -> str:
    """The three parts the Explain prompt asks for."""
    line = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
    if fixing is None or not fixing.right:
        return (f"**What went wrong**: the cell failed with `{first_line(cell.error, 160)}`.\n\n"
                f"**Why**: {ONLY} This error is neither, so I cannot tell you why.\n\n"
                f"**What to try**: {REAL_MODEL}")
    if fixing.what == "column":
        frame = f"`{fixing.frame}`" if fixing.frame else "the frame"
        columns = ", ".join(f"`{c}`" for c in cell.frames.get(fixing.frame or "", []))
        what = (f"**What went wrong**: the cell asks {frame} for a column `'{fixing.wrong}'`, and {frame} has no "
                "column by that name, so pandas raised a KeyError.")
        why = (f"**Why**: {frame} has the columns {columns}. The closest to `'{fixing.wrong}'` is "
               f"`'{fixing.right}'`, so it is most likely a misspelt or renamed column (a guess from the names).")
    else:
        what = f"**What went wrong**: `{fixing.wrong}` is used in `{line}` but no cell defines it: a NameError."
        why = (f"**Why**: the cells above bind `{fixing.right}`, the closest name, so it is most likely a typo "
               "(a guess from the names).")
    use = f"the column `'{fixing.right}'`" if fixing.what == "column" else f"`{fixing.right}`"
    return (f"{what}\n\n{why}\n\n**What to try**: use {use}:\n```python\n{fixing.lines}\n```\n"
            "or run `%agent fix` to get this change proposed in the cell, to accept or reject.")
