"""The checks after an edit (`opencode_nb.diagnostics`), as the tools that change Python run them.

`write` and `edit` call `checked_file` once the file is written, `notebook_edit` calls `checked_cell` once a
code cell is inserted or replaced. What they need of the call is taken from its context here: the project's
root, the notebook's code cells above the changed one (read back, so the cell's real position counts), the
kernel's names, and a formatter's command run as the bash tool runs one, in the call's OS sandbox.

Nothing here fails the edit, which is made already: a check that breaks is a note on the card.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from ...diagnostics.findings import Checked
from ...diagnostics.formatter import FormatterRun
from ...diagnostics.service import NOTHING, Diagnostics, Outcome
from ...errors import ToolError
from ...sandbox.policy import Launch
from ..base import OUTPUT_FOLDER, working_folder, workspace_root
from ..context import ToolContext
from ..shell.process import ShellRun

FORMAT_TIMEOUT_S = 30.0
"""How long one formatter may run on one file."""


async def checked_file(diagnostics: Diagnostics | None, ctx: ToolContext, path: Path, content: str,
                       where: str) -> Outcome:
    """The formatters and checks after `path` was written with `content`; NOTHING without diagnostics."""
    if diagnostics is None:
        return NOTHING

    async def run(line: str) -> FormatterRun:
        return await _run_formatter(ctx, line)

    try:
        return await diagnostics.after_file_change(path, content, where, root=workspace_root(ctx), run=run)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the edit is made: a checker's bug must not turn it into an error
        return Outcome(checked=Checked(where, notes=[f"the checks after the edit failed: {exc}"]))


async def checked_cell(diagnostics: Diagnostics | None, ctx: ToolContext, cell_id: str) -> Outcome:
    """The checks of code cell `cell_id` as the notebook now holds it; NOTHING without diagnostics, outside a
    notebook, or in a kernel that is not Python's."""
    if diagnostics is None or not diagnostics.checks_cells or ctx.notebook is None:
        return NOTHING
    if ctx.kernel is not None and ctx.kernel.language != "python":
        return NOTHING
    where = f"cell {cell_id}"
    try:
        snapshot = await ctx.notebook.read()
        code = [c for c in snapshot.cells if c.cell_type == "code"]
        at = next((i for i, c in enumerate(code) if c.id == cell_id), None)
        if at is None:
            return NOTHING
        known = [n for n in list(ctx.kernel.user_ns) if isinstance(n, str)] if ctx.kernel is not None else []
        # Where ruff looks for the project's settings: the notebook's name in the folder the person works in.
        name = snapshot.path or (ctx.kernel.notebook_path if ctx.kernel is not None else None) or "notebook.ipynb"
        return await diagnostics.after_cell_change(
            code[at].source, [c.source for c in code[:at]], where, notebook=working_folder(ctx) / Path(name).name,
            root=workspace_root(ctx), known=known)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # as in checked_file
        return Outcome(checked=Checked(where, notes=[f"the checks after the edit failed: {exc}"]))


async def _run_formatter(ctx: ToolContext, line: str) -> FormatterRun:
    try:
        launch = await ctx.sandbox.prepare(line, ctx.ask) if ctx.sandbox is not None else Launch()
    except ToolError as exc:  # `sandbox: required` where there is none
        return FormatterRun(failed=f"did not run: {exc}")
    run = ShellRun(line, cwd=workspace_root(ctx), output_dir=ctx.data_dir / OUTPUT_FOLDER, launch=launch)
    await run.wait(FORMAT_TIMEOUT_S)
    if run.timed_out:
        return FormatterRun(f"was stopped after {FORMAT_TIMEOUT_S:g} s", launch.note)
    if run.exit_code != 0:
        said = run.capture.preview().strip().splitlines()
        return FormatterRun(f"failed (exit code {run.exit_code})" + (f": {said[-1][:200]}" if said else ""),
                            launch.note)
    return FormatterRun(None, launch.note)
