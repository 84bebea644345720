"""Running a slash command: `/name arguments` in a prompt.

Configured and markdown commands override the built-ins of the same name. A command runs with its own
agent and model when it names them, else the session's current ones. It runs as a subtask (in a child
session, so the main context stays clean) when it says `subtask: true`, or when its agent is a
subagent and it does not say `subtask: false`.

`` !`cmd` `` in a template runs the shell command and inlines its output; the command line is checked
against the agent's bash rules first and then run by the bash tool's process runner, exactly as the
bash tool would (its own process group, killed whole on timeout or Stop; the sandbox's whole treatment,
`sandbox/treatment.py`, with reads outside the project as the agent's `external_directory` rules allow).
"""

from __future__ import annotations

import asyncio
import re
from functools import partial

from ..config.schema import CommandConfig
from ..errors import NotFoundError, ToolError
from ..sandbox.policy import Launch, SandboxCall, caller_network_rules
from ..sandbox.treatment import read_rules, shown_for
from ..session.deps import LoopDeps
from ..session.loop import SessionLoop
from ..session.models import AssistantMessage, CompactionPart, SubtaskPart
from ..tool.base import OUTPUT_FOLDER
from ..tool.shell.parse import parse_command
from ..tool.shell.process import ShellRun
from .builtin import LOCAL, builtin_commands
from .skill import skill_command, skill_commands
from .template import render_template

SHELL = re.compile(r"!`([^`]+)`")
SHELL_TIMEOUT_S = 60


class CommandRunner:
    def __init__(self, deps: LoopDeps, loop: SessionLoop) -> None:
        self.deps = deps
        self.loop = loop
        self.commands: dict[str, CommandConfig] = {**builtin_commands(), **deps.loaded.commands}

    def get(self, name: str) -> CommandConfig:
        try:
            return self.commands[name]
        except KeyError:
            command = skill_command(self.deps.tools, name)  # a skill is the person's command too (skill.py)
            if command is not None:
                return command
            known = ", ".join(f"/{n}" for n in sorted(self.commands))
            raise NotFoundError("command", f"/{name}", f"available commands: {known}") from None

    def help(self) -> str:
        commands = {**skill_commands(self.deps.tools), **self.commands}
        width = max(len(n) for n in commands) + 1
        rows = sorted(commands.items())
        return "\n".join(f"/{name:<{width}} {command.description or ''}".rstrip() for name, command in rows)

    def agents(self) -> str:
        default = self.deps.agents.default.name
        return "\n".join(f"{'*' if a.name == default else ' '} {a.listed_as:<15} {a.mode:<9} {a.description}"
                         for a in self.deps.agents.list())

    async def run(self, session_id: str, name: str, arguments: str = "", *, agent: str | None = None,
                  model: str | None = None) -> AssistantMessage | str | None:
        """Run `/name arguments`. Local commands (`/help`, `/agents`) return their text."""
        deps = self.deps
        command = self.get(name)
        if name in LOCAL and name not in deps.loaded.commands:
            return self.help() if name == "help" else self.agents()
        current = agent or deps.sessions.current_agent(session_id) or deps.agents.default.name
        if name == "compact" and name not in deps.loaded.commands:
            compaction = CompactionPart(session_id=session_id, message_id="pending", auto=False)
            return await self.loop.prompt(session_id, "", agent=current, model=model, parts=[compaction])
        target = deps.agents.get(command.agent or current)
        text = render_template(command.template, arguments)
        text = await self.expand_shell(session_id, target.name, text)
        chosen_model = command.model or target.model or model
        subtask = command.subtask is True or (target.mode == "subagent" and command.subtask is not False)
        if subtask:
            part = SubtaskPart(session_id=session_id, message_id="pending", prompt=text, agent=target.name,
                               description=command.description or f"/{name}", model=chosen_model, command=name)
            primary = current if deps.agents.get(current).is_primary else deps.agents.default.name
            return await self.loop.prompt(session_id, f"/{name} {arguments}".strip(), agent=primary, model=model,
                                          parts=[part], mention_agents=False)
        return await self.loop.prompt(session_id, text, agent=target.name, model=chosen_model)

    async def expand_shell(self, session_id: str, agent: str, text: str) -> str:
        """Replace each `` !`cmd` `` with the command's output, after the bash permission check."""
        commands = SHELL.findall(text)
        if not commands:
            return text
        rules = self.deps.agents.get(agent).permission
        outputs = await asyncio.gather(*(self._shell(session_id, agent, rules, c) for c in commands))
        for command, output in zip(commands, outputs, strict=True):
            text = text.replace(f"!`{command}`", output, 1)
        return text

    async def _shell(self, session_id: str, agent: str, rules: list, command: str) -> str:
        parsed = parse_command(command)
        await self.deps.permissions.ask(session_id, agent, "bash", parsed.patterns, always=parsed.always,
                                        metadata={"command": command, "source": "command template"}, ruleset=rules,
                                        always_ask=not parsed.parsed)
        # Reads outside the project as the bash tool's would be for this agent (`sandbox/treatment.py`).
        shown = shown_for(read_rules(rules, self.deps.permissions.grants(session_id), agent))
        launch = await self._sandbox(session_id, agent, rules).prepare(
            command, partial(self.deps.permissions.ask, session_id, agent, ruleset=rules), shown=shown) \
            if self.deps.sandbox else Launch()
        run = ShellRun(command, cwd=self.deps.root, output_dir=self.deps.data_dir / OUTPUT_FOLDER, launch=launch)
        await run.wait(SHELL_TIMEOUT_S)
        if run.timed_out:
            raise ToolError(f"The command `{command}` in the template did not finish within {SHELL_TIMEOUT_S} s "
                            "and was stopped.")
        text, _ = run.capture.text()
        return text.strip()

    def _sandbox(self, session_id: str, agent: str, rules: list) -> SandboxCall:
        """The sandbox as the bash tool would see it for `agent` (the note about a missing one is the tool's to
        say: a template's output is pasted into the prompt)."""
        assert self.deps.sandbox is not None
        return SandboxCall(self.deps.sandbox, session_id, lambda: caller_network_rules(
            rules, self.deps.permissions.grants(session_id), agent), tell=False)


def parse_slash(text: str) -> tuple[str, str] | None:
    """`/name rest` at the start of a prompt, as (name, rest); None when the prompt is not a command."""
    match = re.match(r"\s*/([\w][\w./-]*)(?:\s+(.*))?\s*$", text, re.S)
    return (match.group(1), (match.group(2) or "").strip()) if match else None
