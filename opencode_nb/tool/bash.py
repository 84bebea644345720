"""bash: run a shell command in the workspace, streaming its output.

Before anything runs, every simple command in the line is checked (see `support/shell.py`), and paths it
names outside the workspace ask `external_directory` first. The command then runs as its own process group
(`support/process.py`): a timeout or a Stop ends everything it started, and the model gets the output's
tail (errors come last) and the path of the full text.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from ..errors import ToolError
from .base import OUTPUT_FOLDER, Tool, ToolContext, ToolResult, folder_pattern, workspace_root
from .support.process import ShellRun
from .support.shell import command_patterns, outside_paths, parse_command

__all__ = ["BashTool", "command_patterns"]

DEFAULT_TIMEOUT_S = 120
MAX_TIMEOUT_S = 600


class BashParams(BaseModel):
    command: str = Field(description="The shell command to run (bash syntax), from the project root")
    timeout: float | None = Field(
        None, gt=0, json_schema_extra={"maximum": MAX_TIMEOUT_S},
        description=f"Seconds before the command is killed (default {DEFAULT_TIMEOUT_S}, at most {MAX_TIMEOUT_S})",
    )
    description: str | None = Field(
        None, description="What the command does, in 5-10 words, shown to the person (e.g. 'Run the unit tests')"
    )

    @field_validator("timeout")
    @classmethod
    def _in_seconds(cls, value: float | None) -> float | None:
        if value is not None and value > MAX_TIMEOUT_S:
            hint = f" ({value:g} looks like milliseconds)" if value >= 1000 else ""
            raise ValueError(f"timeout is in seconds and at most {MAX_TIMEOUT_S}{hint}")
        return value


class BashTool(Tool[BashParams]):
    id = "bash"
    params = BashParams

    async def execute(self, params: BashParams, ctx: ToolContext) -> ToolResult:
        command = params.command
        if not command.strip():
            raise ToolError("command is empty. Give the shell command to run.")
        parsed = parse_command(command)
        root = workspace_root(ctx)
        folders: list[str] = []
        for path in outside_paths(parsed, root, root):
            pattern = folder_pattern(path if path.is_dir() else path.parent)
            if pattern not in folders:
                folders.append(pattern)
        if folders:
            await ctx.ask("external_directory", folders, always=folders,
                          metadata={"command": command, "directories": [f[:-2] or "/" for f in folders]})
        if parsed.patterns or not parsed.parsed:
            metadata = {"command": command, "description": params.description}
            if not parsed.parsed:
                metadata["unparsed"] = parsed.reason
                await ctx.ask("bash", parsed.patterns, always=parsed.always, metadata=metadata, always_ask=True)
            else:
                await ctx.ask("bash", parsed.patterns, always=parsed.always, metadata=metadata)

        timeout_s = params.timeout or DEFAULT_TIMEOUT_S
        title = params.description or command
        ctx.update(title, {"command": command, "description": params.description})
        run = ShellRun(command, cwd=ctx.directory, output_dir=ctx.data_dir / OUTPUT_FOLDER,
                       on_output=lambda tail: ctx.update(None, {"output": tail}))
        await run.wait(timeout_s)
        return _result(run, title, timeout_s)


def _result(run: ShellRun, title: str, timeout_s: float) -> ToolResult:
    text, extra = run.capture.text()
    text = text.rstrip("\n") or "(no output)"
    if run.timed_out:
        text += (f"\n\n(The command was stopped after {timeout_s:g} s because it exceeded its timeout. If it needs "
                 f"longer, run it again with a larger timeout, at most {MAX_TIMEOUT_S} s.)")
    elif run.stopped_background:
        text += ("\n\n(Processes the command started in the background were still writing to its output and "
                 "were stopped. To leave one running, redirect its output to a file: `cmd > log.txt 2>&1 &`.)")
    if not run.timed_out:
        text += f"\n\n(exit code {run.exit_code})"
    metadata: dict[str, object] = {"command": run.command, "exit": run.exit_code, "timed_out": run.timed_out,
                                   "output": run.capture.preview(), **extra}
    return ToolResult(title, text, metadata)


