"""bash: run a shell command in the working folder (a notebook's), streaming its output.

Before anything runs, the line is checked (see `shell/parse.py`): every command in it, as it will run
(quotes, paths and wrappers seen through), and every statement without a command word. Paths it names
outside the workspace, or builds from what only the run will know, ask `external_directory` first. Then:
- a line that does not parse, or whose programs cannot be known (`$cmd`, `git $sub`), asks a person
  whatever the rules allow;
- a call running code no rule can see (`python -c`, `sh < x`, `source`, `(( y ))` on values that may hide
  a command) asks a person when the rules deny anything and allow the call only by their catch-all: a deny
  rule cannot hold inside code it cannot see. A rule naming the program (`python *: allow`) still allows it.
A redirection into a file that steers the agents (config, `.opencode/`, `AGENTS.md`, git hooks and config)
asks `agent_config`, and one into a file with other names (a hard link) asks `external_directory`. The OS
sandbox is told which outside folders were allowed: where the rules do not allow outside reads, it shows
the command only those (`sandbox/readable.py`), and it keeps the protected files read-only.
The command then runs as its own process group (`shell/process.py`): a timeout or a Stop ends everything
it started, and the model gets the output's tail (errors come last) and the path of the full text.
"""

from __future__ import annotations

from functools import cache, partial
from pathlib import Path

from pydantic import BaseModel, Field, field_validator

from .. import secrets
from ..errors import DeniedError, PolicyRefusedError, ToolError
from ..permission.rules import evaluate
from ..sandbox.policy import Launch
from ..sandbox.protected import AGENT_CONFIG, AGENT_CONFIG_REASON, Protected, for_project, undo_note
from ..sandbox.treatment import shown_for
from .base import (
    OUTPUT_FOLDER,
    Tool,
    ToolContext,
    ToolResult,
    folder_pattern,
    for_person,
    working_folder,
    workspace_root,
)
from .files.access import GIT_PERMISSION, GIT_REASON, hooks_dirs, in_git_dir
from .shell.parse import PROBE, command_patterns, parse_command
from .shell.parsed import Hidden, ParsedCommand
from .shell.process import ShellRun
from .shell.shell_paths import PathCheck, check_paths

__all__ = ["BashTool", "command_patterns"]

GIT_WRITE = "the line writes git's own files (a hook, .git/config), which can make git run commands later"
CONFIG_WRITE = "the line writes a file that steers the agents (configuration or instructions), read by every later run"

MAX_COMMAND_BYTES = 128 * 1024 - 1
"""The longest single argument Linux passes to a program (MAX_ARG_STRLEN, 32 pages, with its NUL): the command
reaches the shell as one."""
DEFAULT_TIMEOUT_S = 120
MAX_TIMEOUT_S = 600


class BashParams(BaseModel):
    command: str = Field(description="The shell command to run (bash syntax), from the working directory")
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
        size = len(command.encode("utf-8", "surrogatepass"))
        if size > MAX_COMMAND_BYTES:
            raise ToolError(f"The command is {size:,} bytes long; the system passes at most {MAX_COMMAND_BYTES:,} "
                            "bytes as one command. Write the long part (a script, a here-document, data) to a file "
                            "with the write tool, then run that file (e.g. `bash script.sh`).")
        root, here = workspace_root(ctx), working_folder(ctx)
        parsed = parse_command(command, cwd=here, root=root)
        # A line may write many paths: the project's git config is read once for them all, not once per path.
        protected = for_project(root, ctx.directory, ctx.sandbox.policy.protected if ctx.sandbox else None)
        in_git = partial(in_git_dir, hooks=cache(hooks_dirs))
        paths = check_paths(parsed, here, root, git_dir=lambda path, top: in_git(path, top) or protected.covers(path))
        approved = await _ask_paths(ctx, command, paths, protected)
        await _ask_secret_files(ctx, command, paths)
        # A hook or a config key written under .git runs the next time anyone runs git: code no rule sees.
        hidden = [*parsed.hidden, *(Hidden(path, path, GIT_WRITE if in_git(root / path, root) else CONFIG_WRITE)
                                    for path in paths.git_internals)]
        await _ask_commands(ctx, command, parsed, hidden, params.description)

        timeout_s = params.timeout or DEFAULT_TIMEOUT_S
        title = params.description or command
        ctx.update(title, {"command": command, "description": params.description})
        shown = shown_for(ctx.rules("external_directory"), approved) if ctx.rules is not None else None
        launch = (await ctx.sandbox.prepare(command, ctx.ask, shown=shown)
                  if ctx.sandbox is not None else Launch())
        run = ShellRun(command, cwd=here, output_dir=ctx.data_dir / OUTPUT_FOLDER,
                       on_output=lambda tail: ctx.update(None, {"output": tail}), launch=launch)
        await run.wait(timeout_s)
        secrets.refresh()  # a `.env` the command wrote: its values are hidden before the output is stored
        return _result(run, title, timeout_s, launch)


async def _ask_paths(ctx: ToolContext, command: str, paths: PathCheck, protected: Protected) -> list[Path]:
    """Ask what the line's paths need; returns the outside folders it was allowed."""
    root = workspace_root(ctx)
    git = [p for p in paths.git_internals if in_git_dir(root / p, root)]
    if git:
        await ctx.ask(GIT_PERMISSION, git, always=git,
                      metadata={"command": command, "paths": git, "reason": GIT_REASON})
    steering = [p for p in paths.git_internals if protected.covers(root / p) and p not in git]
    if steering:
        await ctx.ask(AGENT_CONFIG, steering, always=steering,
                      metadata={"command": command, "paths": steering, "reason": AGENT_CONFIG_REASON})
    linked = [str(p) for p in paths.linked]
    if linked:
        await ctx.ask("external_directory", linked, always=linked,
                      metadata={"command": command, "paths": linked, "reason": "the line writes through files "
                                "with other names (hard links), which may be outside the project"})
    folders: list[str] = []
    allowed: list[Path] = []
    for path in paths.outside:
        folder = path if path.is_dir() else path.parent
        pattern = folder_pattern(folder)
        if pattern not in folders:
            folders.append(pattern)
            allowed.append(folder)
    if not folders and not paths.unknown:
        return allowed
    metadata: dict[str, object] = {"command": command, "directories": [f[:-2] or "/" for f in folders]}
    if paths.unknown:
        metadata["unknown_paths"] = paths.unknown
    await ctx.ask("external_directory", [*folders, *paths.unknown], always=folders, metadata=metadata)
    return allowed


async def _ask_commands(ctx: ToolContext, command: str, parsed: ParsedCommand, hidden: list[Hidden],
                        description: str | None) -> None:
    reasons = ([parsed.reason] if not parsed.parsed and parsed.reason else []) + parsed.unknown
    reasons += [h.reason for h in hidden if _allowed_only_by_catch_all(ctx, h)]
    if not parsed.patterns and not reasons:
        return  # only `cd`s: nothing runs
    metadata: dict[str, object] = {"command": command, "description": description}
    if not parsed.parsed:
        metadata["unparsed"] = parsed.reason
    if reasons:
        metadata["unchecked"] = reasons
    patterns = parsed.patterns or [command.strip()]
    try:
        await ctx.ask("bash", patterns, always=[] if reasons else parsed.always, metadata=metadata,
                      always_ask=bool(reasons))
    except DeniedError as error:
        raise _explained(error, _denied_note(ctx, command, patterns)) from None
    except PolicyRefusedError as error:
        raise _explained(error, _unchecked_note(reasons)) from None


def _allowed_only_by_catch_all(ctx: ToolContext, hidden: Hidden) -> bool:
    """Whether the rules let a hidden call through only by allowing everything while denying something.

    An allowance from a rule that names what it allows (`python *`, a person's "always") stands. A catch-all
    `*: allow` stands too when no rule after it denies anything: then nothing is being kept out.
    """
    if ctx.rules is not None:
        rules = ctx.rules("bash")
        deciding = evaluate("bash", hidden.pattern, rules)
        if deciding.action != "allow" or deciding.pattern != "*":
            return False  # named by a rule; a deny refuses and an ask asks by themselves
        last_catch_all = max((i for i, r in enumerate(rules) if r.pattern == "*"), default=-1)
        return any(r.action == "deny" for r in rules[last_catch_all + 1:])
    if ctx.permitted is None:
        return True
    if ctx.permitted("bash", hidden.pattern) != "allow":
        return False
    # Only the deciding action is known: ask again with the program's name replaced by one no rule can mean.
    return ctx.permitted("bash", PROBE + hidden.pattern[len(hidden.program):]) == "allow"


def _explained(error: ToolError, note: str) -> ToolError:
    if note:
        error.args = (f"{error.args[0] if error.args else error} {note}",)
    return error


def _denied_note(ctx: ToolContext, command: str, patterns: list[str]) -> str:
    if ctx.permitted is None:
        return ""
    denied = next((p for p in patterns if ctx.permitted("bash", p) == "deny"), None)
    if denied is None or denied == command.strip():
        return ""
    return (f"The line runs `{denied}`, which that rule denies however the command is spelled or wrapped. "
            "Do without it, or ask the person to do it or to change the rule.")


def _unchecked_note(reasons: list[str]) -> str:
    if not reasons:
        return ""
    return ("The rules could not check this line, so it needs a person's approval: " + "; ".join(reasons)
            + ". Write the command so that its programs and arguments appear in the line, or tell the person "
            "what you need run.")


def _result(run: ShellRun, title: str, timeout_s: float, launch: Launch) -> ToolResult:
    text, extra = run.capture.text()
    text = text.rstrip("\n") or "(no output)"
    printed = text
    if run.timed_out:
        text += (f"\n\n(The command was stopped after {timeout_s:g} s because it exceeded its timeout. If it needs "
                 f"longer, run it again with a larger timeout, at most {MAX_TIMEOUT_S} s.)")
    elif run.stopped_background:
        text += ("\n\n(Processes the command started in the background were still writing to its output and "
                 "were stopped. To leave one running, redirect its output to a file: `cmd > log.txt 2>&1 &`.)")
    if not run.timed_out:
        text += f"\n\n(exit code {run.exit_code})"
    if run.undone:
        text += undo_note(run.undone)
    text += launch.notes(text)
    metadata: dict[str, object] = {"command": run.command, "exit": run.exit_code, "timed_out": run.timed_out,
                                   "output": run.capture.preview(), "sandbox": launch.label, **extra}
    if launch.note:
        metadata["sandbox_note"] = launch.note  # once per session, on the card: see ShellSandbox.launch
    metadata.update(for_person(_summary(run, timeout_s), printed))
    return ToolResult(title, text, metadata)


def _summary(run: ShellRun, timeout_s: float) -> str:
    """How the command ended, for the person: the notes the model reads say what to do about it."""
    said = [f"Stopped after {timeout_s:g} s, its time limit" if run.timed_out else f"Exit code {run.exit_code}"]
    if run.stopped_background:
        said.append("background processes still writing to its output were stopped")
    if run.undone:
        said.append("what it changed in files that steer the agents was undone: " + "; ".join(run.undone))
    return "; ".join(said)


async def _ask_secret_files(ctx: ToolContext, command: str, paths: PathCheck) -> None:
    """Reading a file that holds secrets (`cat .env`, `< id_rsa`) asks `read` for it, as the read tool does; once
    allowed, its values are learned first, so the output shows them redacted (see `secrets/file_values.py`)."""
    if not paths.secret_files:
        return
    await ctx.ask("read", paths.secret_files, always=paths.secret_files,
                  metadata={"command": command, "paths": paths.secret_files,
                            "reason": "the line reads files that usually hold secrets"})
    root = workspace_root(ctx)
    for name in paths.secret_files:
        secrets.learn_file(name, path=root / name)
