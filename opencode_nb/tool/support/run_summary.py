"""What a person reads of a python run, beside what the model reads of it.

The model is told where the code ran and what stood between it and the person's things, in sentences
written for it ("Ran in the person's namespace (live)…"). The person already knows their own namespace, sees
the code on the card and has an Undo button: they need where it ran in their words, what it changed, and
what it printed and returned, as a cell would show it.
"""

from __future__ import annotations

from typing import Any

from ...values import NOT_CONFINED, CodeRun

SANDBOXES = {"fork": "a copy-on-write fork of your kernel", "worker": "a separate process given copies of the "
             "variables the code names"}
SHOWN_CHARS = 8000
"""Of each printed stream and value, what the card keeps (the end of a stream, the start of a value)."""


def run_summary(run: CodeRun) -> str:
    """Where the code ran, what it changed and how it ended, in a line or two."""
    if run.mode == "live":
        where = "Ran in your namespace"
    elif run.error is not None and run.error.ename == NOT_CONFINED:
        where = "Not run: no sandbox could confine it"
    else:
        confinement = run.confinement or "isolated at the Python level only"
        where = f"Ran in a sandbox ({SANDBOXES[run.mode]}), {confinement}"
        if not confinement.startswith("confined"):
            where += "; your variables are unchanged"
    said = [where + _changes(run)]
    if run.error is not None and run.error.ename != NOT_CONFINED:
        said.append(f"{run.error.ename}: {run.error.evalue}".rstrip(": "))
    return "\n".join(said)


def _changes(run: CodeRun) -> str:
    if run.mode != "live":
        return ""
    changes = run.changes
    named = [f"{what} {', '.join(names)}" for what, names in
             (("created", changes.created), ("rebound", changes.rebound), ("deleted", changes.deleted)) if names]
    text = ": " + "; ".join(named) if named else ""
    if changes.mutated:
        text += f"{';' if named else ':'} may have changed in place {', '.join(changes.mutated)}, which Undo does " \
                "not restore"
    return text


def run_shown(run: CodeRun) -> str:
    """What the run printed, displayed and returned, as text (images are shown beside it)."""
    shown = []
    if run.output.strip():
        shown.append(run.output.rstrip("\n")[-SHOWN_CHARS:])
    for bundle in [*run.displays, *([run.result] if run.result is not None else [])]:
        text = _plain(bundle)
        if text:
            shown.append(text)
    return "\n".join(shown)


def _plain(bundle: dict[str, Any]) -> str:
    if "image/png" in bundle:
        return ""  # the image is on the card; its text is only "<Figure size 640x480 with 1 Axes>"
    text = str(bundle.get("text/plain", ""))
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "\n…"
