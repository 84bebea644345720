"""Turning `%%agent` cells into awaited calls.

A cell magic cannot be a coroutine, yet the cell must stay busy while the agent works (so Run All and
nbclient wait) and must await rather than block (so ipykernel ≥ 7.4 can deliver widget clicks meanwhile).
An input transformer therefore rewrites the cell before IPython parses it: the cell becomes
`await <run>(args, body)`, which ipykernel executes with autoawait. A `%agent …` line at the top level
becomes the same awaited call; one nested in a block is left to the line magic.
"""

from __future__ import annotations

CELL_CALL = "await __import__('opencode_nb.kernel', fromlist=['run_cell']).run_cell({args!r}, {body!r})\n"
LINE_CALL = "{indent}await __import__('opencode_nb.kernel', fromlist=['run_line']).run_line({args!r})\n"


def transform(lines: list[str]) -> list[str]:
    """IPython cleanup transformer: `%%agent` cells and top-level `%agent` lines become awaits."""
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start < len(lines) and lines[start].startswith("%%agent") and _word_ends(lines[start], 7):
        args = lines[start][7:].strip()
        return [CELL_CALL.format(args=args, body="".join(lines[start + 1:]))]
    if not any(line.startswith("%agent") for line in lines):
        return lines
    out = []
    for line in lines:
        if line.startswith("%agent") and _word_ends(line, 6) and not line.rstrip().endswith("\\"):
            out.append(LINE_CALL.format(indent="", args=line[6:].strip()))
        else:
            out.append(line)
    return out


def _word_ends(line: str, at: int) -> bool:
    return len(line) == at or line[at] in " \t\r\n"
