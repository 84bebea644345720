"""python: run Python on the person's live data, in their namespace or in a sandbox that cannot change it.

Which of the two an agent gets follows from its rules for the `python` permission, whose patterns are the
modes: an agent whose rules do not deny `live` runs in the person's namespace, after the ask its rules call
for (build asks); an agent whose rules deny `live` but not `sandbox` (data-explorer) runs in a
copy-on-write fork of the kernel, or in a spawned worker when a fork is unsafe, and never in the live
namespace. When neither sandbox can take the code (objects holding connections), an agent that may go live
is asked whether to; one that may not gets the reason.

What comes back to the model: the streams, the last value, what was displayed (images as images), an
exception as a tool error with a trimmed traceback, and what changed in the namespace. A live run's card
keeps its `run_id`, which `%agent undo` (or the card's Undo button) uses to rebind what it changed.

Each value or display is cut at `MAX_DISPLAY_CHARS`, at a line's end where one is near: a frame printed
whole would crowd out everything else the model reads. What was cut is not lost: the whole text of that
output is saved where every tool's long output goes (`base.save_output`), and the cut says how many
characters are missing and where to read them.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from ..errors import ToolError
from ..values import NOT_CONFINED, Attachment, CodeRun
from .base import Tool, ToolContext, ToolResult, for_person, save_output
from .context import SandboxRefused
from .support.run_summary import run_shown, run_summary
from .support.stream import PREVIEW_CHARS, OutputStream

DEFAULT_TIMEOUT_S = 60
MAX_TIMEOUT_S = 600
MAX_DISPLAY_CHARS = 4000
"""Per rich output, what the model reads of its text (HTML is given as the text a reader would see)."""
CUT_NOTE = ("… {missing:,} more characters (of {total:,}); the whole output is saved at {path} — read it with the "
            "read tool (offset {line} picks up where this stops; set a limit) or grep it")
"""Ends a cut output, as the tool-wide limit's note does: what is missing, and where the whole is."""

_DEFAULT_REPR = re.compile(r"<[\w.]+ (?:object(?: at 0x[0-9a-fA-F]+)?|at 0x[0-9a-fA-F]+)>")
"""`<IPython.core.display.HTML object>`, `<pandas.io.formats.style.Styler at 0x7f…>`: a repr nobody wrote."""

UNDO_NOTE = "The person can undo the new bindings with `%agent undo`."
WHERE = {
    "live": "Ran in the person's namespace (live).",
    "fork": "Ran in a sandbox: a copy-on-write fork of the kernel",
    "worker": "Ran in a sandbox: a separate worker given copies of the variables the code names",
}
CONFINED = ("{where}, {confinement}: it could change none of the person's variables, files, kernel or notebook, "
            "and reached no network; only its scratch folder ($TMPDIR) was writable, and it is gone now.")
UNCONFINED = ("{where}, {confinement}: the person's variables are unchanged, but nothing but this tool's rules "
              "kept the code from files, the network or the kernel.")


class PythonParams(BaseModel):
    code: str = Field(description="Python to run, as in a notebook cell: the last expression's value is shown")
    description: str | None = Field(None, description="What the code does, in 5-10 words, shown to the person")
    timeout: float | None = Field(None, gt=0, le=MAX_TIMEOUT_S,
                                  description=f"Seconds before the run is stopped (default {DEFAULT_TIMEOUT_S})")


class PythonTool(Tool[PythonParams]):
    id = "python"
    params = PythonParams

    async def execute(self, params: PythonParams, ctx: ToolContext) -> ToolResult:
        if ctx.kernel is None:
            raise ToolError("There is no live kernel in this session: the python tool runs code only when the agent "
                            "works in a notebook. Use bash to run a script instead.")
        if not params.code.strip():
            raise ToolError("code is empty. Give the Python to run.")
        live = ctx.permitted is None or ctx.permitted("python", "live") != "deny"
        title = params.description or _first_line(params.code)
        metadata = {"code": params.code, "description": params.description, "mode": "live" if live else "sandbox"}
        await ctx.ask("python", ["live" if live else "sandbox"], always=["live" if live else "sandbox"],
                      metadata=metadata)
        stream = OutputStream(ctx)
        ctx.update(title, metadata)
        timeout_s = params.timeout or DEFAULT_TIMEOUT_S
        try:
            if live:
                run = await ctx.kernel.run_live(params.code, timeout_s=timeout_s, on_output=stream.write)
            else:
                try:
                    mode = ctx.sandbox.policy.mode if ctx.sandbox is not None else "auto"
                    run = await ctx.kernel.run_sandboxed(params.code, timeout_s=timeout_s, on_output=stream.write,
                                                         sandbox=mode)
                except SandboxRefused as refused:
                    if ctx.permitted is None or ctx.permitted("python", "live") == "deny":
                        raise ToolError(f"The code cannot run in a sandbox: {refused}. This agent may not run "
                                        "code in the person's namespace. Do without it, or say in your answer "
                                        "that it needs live mode: an agent allowed to run code in the person's "
                                        "namespace (build) can run it once the person approves.") from None
                    await ctx.ask("python", ["live"], always=["live"],
                                  metadata={**metadata, "mode": "live", "sandbox_refused": str(refused)})
                    run = await ctx.kernel.run_live(params.code, timeout_s=timeout_s, on_output=stream.write)
        finally:
            stream.close()
        summary = {"run": run.model_dump(exclude={"output"}), "output": run.output[-PREVIEW_CHARS:]}
        if run.error is not None:
            ctx.update(None, summary)
            raise ToolError(model_text(run, ctx, include_error=True), summary=run_summary(run))
        images = [Attachment(mime="image/png", url=f"data:image/png;base64,{d['image/png']}")
                  for d in [*run.displays, *([run.result] if run.result else [])] if "image/png" in d]
        return ToolResult(title, model_text(run, ctx), {**metadata, **summary, "mode": run.mode,
                                                        **for_person(run_summary(run), run_shown(run))}, images)


def model_text(run: CodeRun, ctx: ToolContext, *, include_error: bool = False) -> str:
    """What the model reads of a run: where it ran, what it printed, showed and returned, what it changed.

    A rich output past `MAX_DISPLAY_CHARS` is saved whole through `ctx` and cut (see `bounded_display`).
    """
    parts = [where(run), *run.notes]
    if run.output.strip():
        parts.append("Output:\n" + run.output.rstrip("\n"))
    for i, bundle in enumerate(run.displays, 1):
        parts.append(f"Display {i}:\n{_bundle_text(bundle, ctx)}")
    if run.result is not None:
        parts.append("Out:\n" + _bundle_text(run.result, ctx))
    if include_error and run.error is not None:
        parts.append(f"Error: {run.error.ename}: {run.error.evalue}\n{run.error.traceback}")
    parts.append(changes_text(run))
    if run.mode == "live" and run.run_id and not run.error:
        parts.append(UNDO_NOTE)
    return "\n\n".join(p for p in parts if p)


def where(run: CodeRun) -> str:
    """Where the code ran and what stood between it and the person's things."""
    if run.mode == "live":
        return WHERE["live"]
    if run.error is not None and run.error.ename == NOT_CONFINED:
        return "Not run in a sandbox."
    confinement = run.confinement or "isolated at the Python level only"
    template = CONFINED if confinement.startswith("confined") else UNCONFINED
    return template.format(where=WHERE[run.mode], confinement=confinement)


def changes_text(run: CodeRun) -> str:
    changes = run.changes
    scope = "In the person's namespace" if run.mode == "live" else "In the sandbox's copy (discarded)"
    said = [f"{what}: {', '.join(names)}" for what, names in
            (("created", changes.created), ("rebound", changes.rebound), ("deleted", changes.deleted)) if names]
    text = f"{scope}, " + "; ".join(said) + "." if said else f"{scope}, no names were bound or deleted."
    if changes.mutated:
        text += (f" It may have changed in place: {', '.join(changes.mutated)}"
                 + (" (undo does not restore changes made in place)." if run.mode == "live" else "."))
    return text


def _bundle_text(bundle: dict[str, Any], ctx: ToolContext) -> str:
    """The text a reader of the output sees: its plain text, or its HTML as text when the plain text is only an
    object's default repr (`HTML(...)`, a pandas `Styler`), which says nothing of what the cell shows."""
    plain = bundle.get("text/plain")
    if "text/html" in bundle and (plain is None or _DEFAULT_REPR.fullmatch(str(plain).strip())):
        from markdownify import markdownify

        text = markdownify(str(bundle["text/html"]))
    else:
        text = str(bundle.get("text/plain", ""))
    text = bounded_display(text, ctx)
    if "image/png" in bundle:
        text = (text + "\n" if text else "") + "[image/png, attached]"
    return text


def bounded_display(text: str, ctx: ToolContext) -> str:
    """`text` within `MAX_DISPLAY_CHARS`, or its head with a note of what is missing and where the whole is.

    The head ends at the last line break in its second half, else at a space there (a long one-line repr),
    else at the limit: the model reads whole rows of a frame, and the note's offset is the first line it did
    not read in full.
    """
    if len(text) <= MAX_DISPLAY_CHARS:
        return text
    head = text[:MAX_DISPLAY_CHARS]
    for stop in ("\n", " "):
        at = head.rfind(stop)
        if at >= MAX_DISPLAY_CHARS // 2:
            head = head[:at]
            break
    path = save_output(ctx, text)
    line = head.count("\n") + 1 + (text[len(head)] == "\n")
    note = CUT_NOTE.format(missing=len(text) - len(head), total=len(text), path=path, line=line)
    return f"{head}\n{note}"


def _first_line(code: str) -> str:
    line = next((ln.strip() for ln in code.splitlines() if ln.strip()), "")
    return line if len(line) <= 80 else line[:77] + "..."
