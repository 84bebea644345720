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
        transcript._print(f"  ? {request.agent} asks for {request.permission}: {', '.join(request.patterns)}"
                          " — the demo's policy answers: allow once")
        asyncio.get_running_loop().call_soon(ws.permissions.reply, request.id, "once")

    def answer(event: Any) -> None:
        request = event.request
        for question in request.questions:
            transcript._print(f"  ? {request.agent} asks: {question.question} — the demo's policy answers: Yes")
        asyncio.get_running_loop().call_soon(ws.questions.reply, request.id, [["Yes"] for _ in request.questions])

    ws.bus.subscribe(PermissionAsked, policy)
    ws.bus.subscribe(QuestionAsked, answer)
    try:
        session = ws.sessions.create(str(project), title="")
        transcript._print(f"opencode-nb demo — project copy in {project}")
        transcript._print(f"model: {config['model']}\n")
        final = await ws.prompt(session.id, DEMO_PROMPT)
        await ws.loop.titles.wait()
        session = ws.sessions.get(session.id)
        tokens = sum(m.message.tokens.total for m in ws.sessions.messages(session.id)
                     if m.message.role == "assistant")
        transcript._print(f"session {session.id} “{session.title}”: {tokens:,} tokens, ${session.cost:.4f}")
        if final is None or final.error is not None:
            transcript._print(f"the run ended with an error: {final.error.message if final else 'no answer'}")
            return 1
        return 0
    finally:
        transcript.close()
        await ws.aclose()
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            transcript._print(f"kept: {workdir}")
