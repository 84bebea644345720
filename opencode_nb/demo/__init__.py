"""`opencode-nb demo`: a whole session on a small sample project, offline by default."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any, TextIO

from ..permission.events import PermissionAsked
from ..question.events import QuestionAsked
from ..views.text import TextTranscript
from .script import DEMO_PROMPT, DemoModel

DEMO_PERMISSIONS = {"edit": "ask", "bash": {"*": "ask", "python *": "allow", "ls *": "allow"}}
"""Edits and unknown commands ask, so the transcript shows the permission flow."""


def sample_project(destination: str | Path | None = None) -> Path:
    """A fresh copy of the demo's sample project, with the demo's permission rules in its opencode.yaml.

    The quickstart notebook works on this copy, so running it never touches anything of yours.
    """
    import yaml

    parent = Path(destination) if destination else Path(tempfile.mkdtemp(prefix="opencode-nb-quickstart-"))
    project = parent / "weather-stats"
    with as_file(files(__package__).joinpath("sample")) as sample:
        shutil.copytree(sample, project, dirs_exist_ok=True)
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
    """Execute the quickstart headless with nbclient and write `<name>.executed.ipynb` beside it."""
    import os
    import sys

    import nbformat
    from nbclient import NotebookClient

    out = out or sys.stdout
    path = path or quickstart_path()
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=timeout_s, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    print(f"executing {path} …", file=out)
    client.execute(env={**os.environ, "OPENCODE_NB_HEADLESS": "1"})  # the kernel's, not this process's
    target = path.with_name(path.stem + ".executed.ipynb")
    if Path(__file__).resolve().parent in path.resolve().parents or not os.access(path.parent, os.W_OK):
        target = Path.cwd() / target.name  # the copy installed with the package: write where the person is
    nbformat.write(notebook, target)
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get("text/plain") or output.get("text") or ""
            if text:
                print(text if isinstance(text, str) else "".join(text), file=out)
    print(f"\nwrote {target}", file=out)
    return 0


def run_demo(model: str | None = None, *, keep: bool = False, out: TextIO | None = None) -> int:
    return asyncio.run(demo(model, keep=keep, out=out))


async def demo(model: str | None = None, *, keep: bool = False, out: TextIO | None = None) -> int:
    from ..provider.scripted import Scripted
    from ..workspace import Workspace

    workdir = Path(tempfile.mkdtemp(prefix="opencode-nb-demo-"))
    project = workdir / "weather-stats"
    with as_file(files(__package__).joinpath("sample")) as sample:
        shutil.copytree(sample, project)
    config: dict[str, Any] = {"model": model or "scripted/demo", "permission": DEMO_PERMISSIONS}
    ws = Workspace(project, config, data_dir=workdir / "data")
    if model is None:
        ws.providers.register("scripted", Scripted(respond=DemoModel()))
    transcript = TextTranscript(ws.bus, out)

    def policy(event: Any) -> None:
        request = event.request
        transcript.note(f"  ? {request.agent} asks for {request.permission}: {', '.join(request.patterns)}"
                          " — the demo's policy answers: allow once")
        asyncio.get_running_loop().call_soon(ws.permissions.reply, request.id, "once")

    def answer(event: Any) -> None:
        request = event.request
        for question in request.questions:
            transcript.note(f"  ? {request.agent} asks: {question.question} — the demo's policy answers: Yes")
        asyncio.get_running_loop().call_soon(ws.questions.reply, request.id, [["Yes"] for _ in request.questions])

    ws.bus.subscribe(PermissionAsked, policy)
    ws.bus.subscribe(QuestionAsked, answer)
    try:
        session = ws.sessions.create(str(project), title="")
        transcript.note(f"opencode-nb demo — project copy in {project}")
        transcript.note(f"model: {config['model']}\n")
        result = await ws.prompt(session.id, DEMO_PROMPT)
        await ws.loop.titles.wait()
        session = ws.sessions.get(session.id)
        transcript.note(f"session {session.id} “{session.title}”: {result.tokens.total:,} tokens, "
                        f"${result.cost:.4f}")
        if result.message is None or result.error is not None:
            transcript.note(f"the run ended with an error: {result.error.message if result.error else 'no answer'}")
            return 1
        return 0
    finally:
        transcript.close()
        await ws.aclose()
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            transcript.note(f"kept: {workdir}")
