"""notebook_edit: insert, replace or delete one cell; the person sees the cell's diff before it changes.

The permission's pattern is the action, so a person can let an agent add cells freely and still be asked
before one is replaced or deleted. Everything the prompt needs is read before asking (an unknown id is an
error then, not after the person said yes), and the call's shape is checked before anything is read: each
action takes its own fields, and a field that belongs to another action is named, since it usually means
the model picked the wrong action or the wrong field.

The cell an agent was called from holds the person's prompt and is running: it is never replaced or
deleted. A cell an agent inserts says which session and call made it (`metadata.opencode_nb`).

Under review (`review: cells`, or a run that forces it, `ctx.review`) the change is proposed instead and the
call returns at once: the person sees the change itself and accepts or rejects it, so the permission is not
asked as well; a rule that denies `notebook_edit` still denies it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..diagnostics.service import Diagnostics
from ..errors import DeniedError, ToolError
from ..values import Cell, CellType, NewCell
from .base import Tool, ToolContext, ToolResult, for_person
from .context import CellProposal, NotebookAccess
from .files.textfile import diff_counts, unified_diff
from .notebook import access, refused_as_error
from .support.checks import checked_cell

Action = Literal["insert", "replace", "delete"]

FIELDS: dict[str, tuple[set[str], set[str]]] = {
    "insert": ({"source"}, {"after", "cell_type"}),
    "replace": ({"cell_id", "source"}, {"cell_type"}),
    "delete": ({"cell_id"}, set()),
}
"""Per action, the fields it needs and those it may take besides."""

MEANING = {
    "cell_id": "the id of the cell (notebook_read lists the ids)",
    "source": "the cell's whole content",
    "after": "the id of the cell to insert below",
    "cell_type": "code, markdown or raw",
}

HINTS = {
    ("insert", "cell_id"): "to place the new cell below a cell, give that cell's id as `after`",
    ("replace", "after"): "replace changes the cell in place; `after` is only for insert",
    ("delete", "after"): "`after` is only for insert",
    ("delete", "source"): "delete removes the cell; to change its content, use replace",
    ("delete", "cell_type"): "delete removes the cell; to change its type, use replace",
}


class NotebookEditParams(BaseModel):
    action: Action = Field(description="insert a new cell, replace a cell's source, or delete a cell")
    cell_id: str | None = Field(None, description="replace and delete: the id of the cell, from notebook_read")
    after: str | None = Field(None, description=(
        "insert only: the id of the cell to insert below. Leave it out to insert below the cell the agent was "
        "called from"))
    cell_type: CellType | None = Field(None, description=(
        "insert: the new cell's type (default code). replace: a new type for the cell (default: unchanged)"))
    source: str | None = Field(None, description="insert and replace: the cell's whole new source")


class NotebookEditTool(Tool[NotebookEditParams]):
    id = "notebook_edit"
    params = NotebookEditParams

    def __init__(self, diagnostics: Diagnostics | None = None) -> None:
        self.diagnostics = diagnostics
        """Checks a code cell it inserted or replaced (`opencode_nb.diagnostics`); None: no checks."""

    async def execute(self, params: NotebookEditParams, ctx: ToolContext) -> ToolResult:
        check_fields(params)
        notebook = access(ctx)
        if params.action == "insert":
            return await self._checked(await _insert(notebook, params, ctx), ctx)
        assert params.cell_id is not None
        old = await _cell(notebook, params.cell_id)
        calling = notebook.calling_cell(ctx.session_id)
        if old.id == calling or old.running:
            whose = "the cell this agent was called from: it holds the person's prompt and" if old.id == calling \
                else "running now and"
            raise ToolError(f"Cell {old.id} is {whose} cannot be {params.action}d. Choose another cell, or "
                            "insert a new one.")
        if params.action == "replace":
            return await self._checked(await _replace(notebook, old, params, ctx), ctx)
        return await _delete(notebook, old, ctx)

    async def _checked(self, result: ToolResult, ctx: ToolContext) -> ToolResult:
        """`result` with the findings in the code cell it made or changed; a proposal is not in the notebook yet."""
        ids = result.metadata.get("cell_ids")
        if self.diagnostics is None or result.metadata.get("cell_type") != "code" or not ids or ids[0] == "?":
            return result
        after = await checked_cell(self.diagnostics, ctx, ids[0])
        return ToolResult(result.title, result.output + after.for_model(), {**result.metadata, **after.metadata()},
                          result.attachments)


def check_fields(params: NotebookEditParams) -> None:
    """Raises a ToolError naming every field the action lacks, and every field it does not take."""
    needed, optional = FIELDS[params.action]
    given = {name for name in MEANING if getattr(params, name) is not None}
    problems = [f"- {params.action} needs `{name}`: {MEANING[name]}." for name in sorted(needed - given)]
    for name in sorted(given - needed - optional):
        hint = HINTS.get((params.action, name), f"{params.action} does not use it")
        problems.append(f"- {params.action} does not take `{name}`: {hint}.")
    if problems:
        usage = {"insert": "insert takes source, and optionally after and cell_type",
                 "replace": "replace takes cell_id and source, and optionally cell_type",
                 "delete": "delete takes cell_id only"}[params.action]
        raise ToolError("notebook_edit cannot do this call, so nothing was changed:\n" + "\n".join(problems)
                        + f"\n{usage[0].upper()}{usage[1:]}. Call it again with the fields of the action you mean.")


def edit_title(action: str, cell_id: str | None = None, after: str | None = None) -> str:
    """Worded as the views label a call before it has a title of its own (views/labels.py)."""
    if action == "insert":
        return f"insert below [{after}]" if after else "insert below the agent's cell"
    return f"{action} [{cell_id}]"


async def _cell(notebook: NotebookAccess, cell_id: str) -> Cell:
    snapshot = await refused_as_error(notebook.read([cell_id]))
    found = [c for c in snapshot.cells if c.id == cell_id]
    if not found:
        raise ToolError(f"There is no cell {cell_id} in the notebook. Call notebook_read to see the cells' ids.")
    return found[0]


async def _insert(notebook: NotebookAccess, params: NotebookEditParams, ctx: ToolContext) -> ToolResult:
    assert params.source is not None
    if params.after is not None:
        await _cell(notebook, params.after)
        where, title = f"below cell {params.after}", edit_title("insert", after=params.after)
    else:
        calling = notebook.calling_cell(ctx.session_id)
        where = f"below the agent's cell {calling}" if calling else "at the end of the notebook"
        title = f"insert below [{calling}]" if calling else "insert at the end"
    cell_type: CellType = params.cell_type or "code"
    diff = unified_diff(f"new {cell_type} cell", "", params.source)
    metadata = {"action": "insert", "where": where, "after": params.after, "cell_type": cell_type, "diff": diff}
    mark = {"opencode_nb": {"session": ctx.session_id, "call": ctx.call_id}}
    if reviewed(ctx, "insert"):
        return await _propose(ctx, title, metadata, CellProposal(
            action="insert", cell_id=None, after=params.after, cell_type=cell_type, old_source="", old_type=None,
            new_source=params.source, diff=diff, metadata=mark, **_who(ctx)))
    await ctx.ask("notebook_edit", ["insert"], always=["insert"], metadata=metadata)
    ids = await refused_as_error(notebook.insert(
        [NewCell(cell_type=cell_type, source=params.source, metadata=mark)], after=params.after,
        session_id=ctx.session_id))
    new_id = ids[0] if ids else "?"
    follow = " It has not been run: run it with notebook_run." if cell_type == "code" else ""
    return ToolResult(f"{title} → [{new_id}]", f"Inserted {cell_type} cell {new_id} {where}.{follow}",
                      {**metadata, "cell_ids": ids, **_counts(diff), **for_person(
                          f"Inserted {cell_type} cell [{new_id}] {where}" + (", not run yet" if follow else ""), "")})


async def _replace(notebook: NotebookAccess, old: Cell, params: NotebookEditParams, ctx: ToolContext) -> ToolResult:
    assert params.source is not None
    cell_type = params.cell_type or old.cell_type
    if params.source == old.source and cell_type == old.cell_type:
        raise ToolError(f"Cell {old.id} already has this source and type: there is nothing to change.")
    diff = unified_diff(f"cell {old.id}", old.source, params.source)
    retyped = f"{old.cell_type} → {cell_type}" if cell_type != old.cell_type else None
    where = f"cell {old.id}" + (f" ({retyped})" if retyped else "")
    metadata = {"action": "replace", "cell_id": old.id, "where": where, "cell_type": cell_type,
                "retyped": retyped, "diff": diff}
    if reviewed(ctx, "replace"):
        return await _propose(ctx, edit_title("replace", old.id), metadata, CellProposal(
            action="replace", cell_id=old.id, after=None, cell_type=cell_type, old_source=old.source,
            old_type=old.cell_type, new_source=params.source, diff=diff, **_who(ctx)))
    await ctx.ask("notebook_edit", ["replace"], always=["replace"], metadata=metadata)
    await refused_as_error(notebook.replace(old.id, source=params.source, cell_type=params.cell_type,
                                            session_id=ctx.session_id))
    counts = _counts(diff)
    text = f"Replaced the source of cell {old.id} (+{counts['additions']} -{counts['deletions']} lines)"
    text += f" and changed its type ({retyped})." if retyped else "."
    if cell_type == "code":
        text += " Its outputs are from before the change until it runs again (notebook_run)."
    said = f"Replaced the source of cell [{old.id}]" + (f" and changed its type ({retyped})" if retyped else "")
    return ToolResult(edit_title("replace", old.id), text, {**metadata, "cell_ids": [old.id], **counts,
                                                            **for_person(said, "")})


async def _delete(notebook: NotebookAccess, old: Cell, ctx: ToolContext) -> ToolResult:
    diff = unified_diff(f"cell {old.id}", old.source, "")
    metadata = {"action": "delete", "cell_id": old.id, "where": f"cell {old.id}", "cell_type": old.cell_type,
                "diff": diff}
    if reviewed(ctx, "delete"):
        return await _propose(ctx, edit_title("delete", old.id), metadata, CellProposal(
            action="delete", cell_id=old.id, after=None, cell_type=old.cell_type, old_source=old.source,
            old_type=old.cell_type, new_source="", diff=diff, **_who(ctx)))
    await ctx.ask("notebook_edit", ["delete"], always=["delete"], metadata=metadata)
    await refused_as_error(notebook.delete([old.id], session_id=ctx.session_id))
    return ToolResult(edit_title("delete", old.id), f"Deleted {old.cell_type} cell {old.id}.",
                      {**metadata, "cell_ids": [old.id], **_counts(diff),
                       **for_person(f"Deleted {old.cell_type} cell [{old.id}]", "")})


def reviewed(ctx: ToolContext, action: str) -> bool:
    """Whether this change is proposed rather than made. A rule that denies it denies the proposal too.

    Raises:
        DeniedError: a rule denies `notebook_edit` for this action.
    """
    if ctx.review is None or not ctx.review.reviewing(ctx.session_id, ctx.agent):
        return False
    if ctx.permitted is not None and ctx.permitted("notebook_edit", action) == "deny":
        rules = ctx.rules("notebook_edit") if ctx.rules is not None else []
        raise DeniedError(rules)
    return True


def _who(ctx: ToolContext) -> dict[str, Any]:
    return {"session_id": ctx.session_id, "message_id": ctx.message_id, "call_id": ctx.call_id, "agent": ctx.agent}


async def _propose(ctx: ToolContext, title: str, metadata: Mapping[str, Any], proposal: CellProposal) -> ToolResult:
    assert ctx.review is not None
    outcome = await ctx.review.propose(proposal)
    shown = {**metadata, "pending": outcome.n, "review": outcome.state, **_counts(proposal.diff)}
    if outcome.decide:
        shown["decide"] = outcome.decide
    return ToolResult(f"{title} · change {outcome.n} {outcome.state}", outcome.told,
                      {**shown, **for_person(outcome.said, "")})


def _counts(diff: str) -> dict[str, int]:
    added, removed = diff_counts(diff)
    return {"additions": added, "deletions": removed}
