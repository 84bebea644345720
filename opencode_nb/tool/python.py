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
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..errors import ToolError
from ..values import NOT_CONFINED, Attachment, CodeRun
from .base import Tool, ToolContext, ToolResult
from .context import SandboxRefused
from .support.stream import PREVIEW_CHARS, OutputStream

DEFAULT_TIMEOUT_S = 60
MAX_TIMEOUT_S = 600
MAX_DISPLAY_CHARS = 4000
"""Per rich output, what the model reads of its text (HTML is given as the text a reader would see)."""

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
            raise ToolError(model_text(run, include_error=True))
        images = [Attachment(mime="image/png", url=f"data:image/png;base64,{d['image/png']}")
                  for d in [*run.displays, *([run.result] if run.result else [])] if "image/png" in d]
        return ToolResult(title, model_text(run), {**metadata, **summary, "mode": run.mode}, images)


def model_text(run: CodeRun, *, include_error: bool = False) -> str:
    """What the model reads of a run: where it ran, what it printed, showed and returned, what it changed."""
    parts = [where(run), *run.notes]
    if run.output.strip():
        parts.append("Output:\n" + run.output.rstrip("\n"))
    for i, bundle in enumerate(run.displays, 1):
        parts.append(f"Display {i}:\n{_bundle_text(bundle)}")
    if run.result is not None:
        parts.append("Out:\n" + _bundle_text(run.result))
    if include_error and run.error is not None:
        parts.append(f"Error: {run.error.ename}: {run.error.evalue}\n{run.error.traceback}")
    parts.append(changes_text(run))
    if run.mode == "live" and run.run_id and not run.error:
        parts.append("The person can undo the new bindings with `%agent undo`.")
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


def _bundle_text(bundle: dict[str, Any]) -> str:
    if "text/html" in bundle and "text/plain" not in bundle:
        from markdownify import markdownify

        text = markdownify(str(bundle["text/html"]))
    else:
        text = str(bundle.get("text/plain", ""))
    if "image/png" in bundle:
        text = (text + "\n" if text else "") + "[image/png, attached]"
    return text if len(text) <= MAX_DISPLAY_CHARS else text[:MAX_DISPLAY_CHARS] + " …(cut)"


def _first_line(code: str) -> str:
    line = next((ln.strip() for ln in code.splitlines() if ln.strip()), "")
    return line if len(line) <= 80 else line[:77] + "..."
