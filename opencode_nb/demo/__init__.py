"""`opencode-nb demo`: a whole session on a small sample project, offline by default."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..permission.unattended import POLICY_ENV
from ..provider.registry import OFFLINE_MODEL
from ..sandbox.status import sandbox_status
from ..views.text import TextTranscript
from .scratch import copy_sample, process_scratch
from .script import DEMO_PROMPT, DemoModel

if TYPE_CHECKING:
    from ..workspace import Workspace

DEMO_PERMISSIONS = {"edit": "ask", "bash": {"*": "ask", "python *": "allow", "ls *": "allow"}}
"""Edits and unknown commands ask, so the transcript shows the permission flow."""

Attach = Callable[["Workspace", TextIO], Callable[[], None]]
"""Prints a workspace's session and answers its asks (the terminal's `wire`); returns what undoes it."""


def sample_project(destination: str | Path | None = None) -> Path:
    """A fresh copy of the demo's sample project, with the demo's permission rules in its opencode.yaml.

    The quickstart notebook works on this copy, so running it never touches anything of yours. Without a
    `destination` the copy is temporary: it is removed when the kernel (the process) exits.
    """
    import yaml

    project = copy_sample(Path(destination) if destination else process_scratch())
    (project / "opencode.yaml").write_text(yaml.safe_dump({"permission": DEMO_PERMISSIONS}), encoding="utf-8")
    return project


def sensors_csv() -> Path:
    """The data-exploration notebook's sample: 42 readings from three sites, with gaps, an impossible value
    and inconsistent status labels to find."""
    return Path(str(files(__package__).joinpath("data", "sensors.csv")))


def quickstart_path() -> Path:
    """The quickstart notebook: the repository's copy in a checkout, else the one installed with the package."""
    checkout = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"
    if checkout.is_file():
        return checkout
    return Path(str(files(__package__).joinpath("quickstart.ipynb")))  # a plain file of the installed package


def run_notebook(path: Path | None = None, *, timeout_s: int = 600, out: TextIO | None = None) -> int:
    """Execute a notebook headless with nbclient and write `<name>.executed.ipynb`.

    The built-in quickstart runs in, and is written to, the current directory: the copy that comes with
    opencode_nb is not the person's to write into. A notebook the person names is written beside itself,
    as `jupyter nbconvert --execute` does, unless that folder is read-only.
    """
    import nbformat
    from nbclient import NotebookClient

    out = out or sys.stdout
    builtin = path is None
    path = path or quickstart_path()
    where = Path.cwd() if builtin else path.parent
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=timeout_s, kernel_name="python3",
                            resources={"metadata": {"path": str(where)}})
    print(f"executing {path} …", file=out)
    client.execute(env={**os.environ, "OPENCODE_NB_HEADLESS": "1"})  # the kernel's, not this process's
    target = where / f"{path.stem}.executed.ipynb"
    if not os.access(where, os.W_OK):
        target = Path.cwd() / target.name
    nbformat.write(notebook, target)
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get("text/plain") or output.get("text") or ""
            if text:
                print(text if isinstance(text, str) else "".join(text), file=out)
    print(f"\nwrote {target}", file=out)
    return 0


def run_demo(model: str | None = None, *, keep: bool = False, out: TextIO | None = None,
             attach: Attach | None = None) -> int:
    return asyncio.run(demo(model, keep=keep, out=out, attach=attach))


async def demo(model: str | None = None, *, keep: bool = False, out: TextIO | None = None,
               attach: Attach | None = None) -> int:
    """Run the demo's prompt on a temporary copy of the sample project and print the session.

    Args:
        model: a real model to use instead of the offline demo model.
        keep: keep the project copy and the session store instead of removing them at the end.
        attach: prints the session and puts each ask to the person (the terminal's `wire`). Without it
            nobody is asked: asks are decided by the unattended policy, `allow` unless
            `OPENCODE_NB_PERMISSION` names another.
    """
    from ..provider.scripted import Scripted
    from ..workspace import Workspace

    out = out or sys.stdout
    workdir = Path(tempfile.mkdtemp(prefix="opencode-nb-demo-"))
    project = copy_sample(workdir)
    env = {**os.environ, POLICY_ENV: os.environ.get(POLICY_ENV) or "allow"}
    config: dict[str, Any] = {"model": model or OFFLINE_MODEL, "permission": DEMO_PERMISSIONS}
    ws = Workspace(project, config, data_dir=workdir / "data", env=env)
    if model is None:
        ws.providers.register("scripted", Scripted(respond=DemoModel()))  # whatever a config's script says
    transcript = TextTranscript(ws.bus, out) if attach is None else None
    detach = attach(ws, out) if attach is not None else None

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    try:
        session = ws.sessions.create(str(project), title="")
        say(f"opencode-nb demo — a copy of the sample project in {project}")
        say(f"model: {config['model']}" + (" (the offline demo model)" if model is None else ""))
        say("sandbox: " + (await asyncio.to_thread(sandbox_status, ws.sandbox.mode, ws.sandbox.binary)).line)
        if attach is not None:
            say("asks: you answer each one here\n")
        elif ws.unattended_policy == "allow":
            say(f"asks: each is allowed once for you (set {POLICY_ENV}=deny to see them refused, or run with --ask "
                "to answer them yourself)\n")
        else:
            say(f"asks: nobody is asked; {POLICY_ENV}={ws.unattended_policy} decides each one\n")
        result = await ws.prompt(session.id, DEMO_PROMPT)
        await ws.loop.titles.wait()
        session = ws.sessions.get(session.id)
        say(f"session {session.id} “{session.title}”: {result.tokens.total:,} tokens, ${result.cost:.4f}")
        if result.finish == "tool-calls" and result.error is None:
            say("the run stopped at a rejection: a plain reject ends it; typing why instead lets the agent carry on")
        if result.message is None or result.error is not None:
            say(f"the run ended with an error: {result.error.message if result.error else 'no answer'}")
            return 1
        return 0
    finally:
        if transcript is not None:
            transcript.close()
        if detach is not None:
            detach()
        await ws.aclose()
        if keep:
            say(f"kept the project copy in {project} and its session store in {workdir / 'data'}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
            say(f"removed the project copy and its session store ({workdir}); run with --keep to look at them "
                "afterwards")
