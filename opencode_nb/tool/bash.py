"""bash: run a shell command in the workspace, streaming its output.

The command runs in its own process group, so a timeout or a Stop kills everything it started, not just
the shell; the group is then reaped, leaving no orphan behind the notebook.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time

from pydantic import BaseModel, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult
from .shell import command_patterns, outside_paths, parse_command

__all__ = ["BashTool", "command_patterns"]

DEFAULT_TIMEOUT_S = 120
MAX_TIMEOUT_S = 600
UPDATE_INTERVAL_S = 0.1
"""Live output reaches views at most ten times a second."""
TAIL_CHARS = 4000
KILL_GRACE_S = 2.0


class BashParams(BaseModel):
    command: str = Field(description="The shell command to run")
    timeout: float | None = Field(None, gt=0, le=MAX_TIMEOUT_S,
                                  description=f"Seconds before the command is killed (default {DEFAULT_TIMEOUT_S})")
    description: str | None = Field(None, description="What the command does, in 5-10 words, for the person")


class BashTool(Tool[BashParams]):
    id = "bash"
    params = BashParams

    async def execute(self, params: BashParams, ctx: ToolContext) -> ToolResult:
        parsed = parse_command(params.command)
        metadata = {"command": params.command, "description": params.description}
        await ctx.ask("bash", parsed.patterns, always=parsed.always,
                      metadata={**metadata, **({} if parsed.parsed else {"unparsed": True})},
                      **({} if parsed.parsed else {"always_ask": True}))
        root = ctx.directory.resolve()
        for path in outside_paths(parsed, root, root):
            folder = path if path.is_dir() else path.parent
            await ctx.ask("external_directory", [f"{folder.as_posix()}/*"], always=[f"{folder.as_posix()}/*"],
                          metadata={"path": str(path), "command": params.command})
        title = params.description or params.command
        output, code, timed_out = await run(params.command, ctx, params.timeout or DEFAULT_TIMEOUT_S)
        text = output.rstrip("\n") or "(no output)"
        if timed_out:
            text += f"\n\n(Killed after {params.timeout or DEFAULT_TIMEOUT_S:g} s: the command timed out.)"
        elif code:
            text += f"\n\n(Exit code {code}.)"
        return ToolResult(title, text, {**metadata, "exit": code, "timed_out": timed_out, "output": _tail(output)})


async def run(command: str, ctx: ToolContext, timeout_s: float) -> tuple[str, int | None, bool]:
    proc = await asyncio.create_subprocess_exec(
        "bash", "-c", command, cwd=ctx.directory, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb"},
    )
    chunks: list[str] = []
    last_update = 0.0

    async def pump() -> None:
        nonlocal last_update
        assert proc.stdout is not None
        while block := await proc.stdout.read(4096):
            chunks.append(block.decode(errors="replace"))
            now = time.monotonic()
            if now - last_update >= UPDATE_INTERVAL_S:
                last_update = now
                ctx.update(None, {"output": _tail("".join(chunks))})
        await proc.wait()

    try:
        await asyncio.wait_for(pump(), timeout_s)
    except TimeoutError:
        await _kill(proc)
        return "".join(chunks), None, True
    except BaseException:  # CancelledError included: the person pressed stop
        await _kill(proc)
        ctx.update(None, {"output": _tail("".join(chunks))})
        raise
    return "".join(chunks), proc.returncode, False


async def _kill(proc: asyncio.subprocess.Process) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), KILL_GRACE_S)
            return
        except TimeoutError:
            continue
    raise ToolError(f"could not stop process group {proc.pid}")


def _tail(text: str) -> str:
    return text if len(text) <= TAIL_CHARS else "…" + text[-TAIL_CHARS:]
