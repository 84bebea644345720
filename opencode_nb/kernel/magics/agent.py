"""`%agent` and `%%agent`: reading what the person typed and handing it to the notebook agent.

Prompt cells normally never reach the magic: the input transformer turns them into awaited calls of
`run_cell`/`run_line`. The magic itself serves subcommands, and prompts typed where an await is
impossible (inside a function), which then run detached.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

if TYPE_CHECKING:
    from ..runner import NotebookAgent

HELP = """\
%%agent [--agent NAME] [--model PROVIDER/MODEL] [--session ID | --new] [--bg]
<prompt>                 run the prompt; consecutive cells continue the notebook's session
%agent <prompt>          the same, in one line
%%agent --plan ID --step N [--model PROVIDER/MODEL]
<instruction>            carry out step N of plan ID (a cell an approved plan saved) with the build agent in
                         the plan's session; a finished step is ticked, a failed one fails the cell; a cell
                         of an unknown plan, or one a newer plan replaced, says so, runs nothing and does
                         not stop Run All; a step that already ran for this cell says so once (run it
                         again to re-run it)

A plan approved from a prompt cell runs its steps right away, in order, each in its own cell, before the
cells below (Run All goes on after them); with --bg its steps wait as cells.

In a prompt: /command args runs a slash command, @agent hands the prompt to a subagent, @path attaches a
file, {var} inserts a notebook variable ({{ and }} for literal braces).

%agent sessions [--all]  this notebook's sessions, children indented (--all: every notebook's)
%agent resume ID         continue session ID from the next prompt
%agent show [ID]         the transcript of a session (default: the current one)
%agent new               start a new session from the next prompt
%agent agents            the agents, their modes and models
%agent skills            the skills agents may load (SKILL.md folders), where each came from, the ones a
                         nearer skill shadows and the files that cannot be used
%agent mcp               the MCP servers: starting, ready, failed (and why) or waiting for your approval;
                         their tools and the rule each call meets
%agent tool add NAME     offer your function NAME to the agents as a tool (or decorate it: from opencode_nb
                         import tool; @tool); each call asks first unless a rule names it (query: allow)
%agent tool remove NAME  stop offering it
%agent tool list         your functions offered as tools (also %agent tools): parameters and the rule in force
%agent models            the models known here, the one in use (and what chose it), the default, and what
                         each provider still needs
%agent permissions       what the agent may do, per permission; the rules behind it (last match wins)
                         and the "always" approvals of this session
%agent stop              stop every running agent of this notebook
%agent config            the configuration in force, defaults included, secrets masked, and where each
                         value came from (default, file:line, $VARIABLE, %config)
%agent config accept|keep
                         apply a configuration change that agents may have made and that loosens what they
                         may do, or keep the configuration confirmed before (the change's prompt says what)
%agent undo [RUN]        take back the latest turn in one step: the files it changed (whoever wrote them), the
                         cells it inserted, edited or deleted and the names its live python bound; the model no
                         longer sees the turn. A file or name you changed since is yours: the undo shows what it
                         would overwrite and asks (headless: keeps yours and says so). RUN: one python run only
%agent undo --to N|MESSAGE
                         take back turn N (or the turn of that message) and every later one
%agent redo              put back what the latest undo took (until the next prompt)
%agent checkpoints       the session's turns and what each changed: files (+/- lines), cells, names
%agent diff [N]          the file diff of turn N (default: the latest)
%agent plan [list]       this project's plans (.opencode/plans/) and how far each has got
%agent plan run [ID] [--from N]
                         run the plan's unticked steps (or steps N onwards) one by one, each shown in its
                         cell, stopping at the first failure; default: this notebook's latest plan
%agent plan cells [ID]   save the plan as cells under this cell (default: the current session's plan)
%agent reload            read the configuration files again now (each %agent cell does it anyway when
                         opencode.yaml or an agent file changed; a file with problems keeps the previous one)
%agent help              this text

Models: anthropic/... needs ANTHROPIC_API_KEY, openai/... needs OPENAI_API_KEY, scripted/demo runs offline.
A local OpenAI-compatible server (Ollama, llama.cpp, vLLM) needs no key: three lines in opencode.yaml
(the part after local/ is the server's model name; llama.cpp and vLLM listen on their own port):

    model: local/llama3.2
    provider:
      local: {type: openai-compatible, base_url: "http://localhost:11434/v1"}

Optional programs: ripgrep (rg) makes the grep tool fast and .gitignore-aware (without it a slower search in
Python is used); chromium is needed only to run the project's own browser tests.

Settings: %config Agent.model = "anthropic/claude-sonnet-4-6", Agent.agent, Agent.directory, Agent.mode
(auto|attached|detached), Agent.permission (deny|allow|allow-readonly: how asks are answered when nobody
is present, e.g. under nbclient)."""

SUBCOMMANDS: dict[str, tuple[int, int]] = {
    "sessions": (0, 1), "resume": (1, 1), "show": (0, 1), "new": (0, 0), "agents": (0, 0), "models": (0, 0),
    "permissions": (0, 0), "stop": (0, 0), "config": (0, 1), "reload": (0, 0), "help": (0, 0), "undo": (0, 2),
    "redo": (0, 0), "checkpoints": (0, 0), "diff": (0, 1),
    "plan": (0, 4), "skills": (0, 0), "mcp": (0, 0), "tool": (1, 2), "tools": (0, 0),
}
"""Subcommand → (min, max) arguments. A line that does not fit is a prompt: `%agent stop the server`;
a bare `%agent` is `help`."""


QUIET_SUBCOMMANDS = frozenset({"help", "stop", "reload"})
"""Subcommands that need no configuration (help and stop work even when it is broken) or read it themselves."""

PLAN_COMMAND = "%agent plan"
"""`line()` returns this as the options of a `plan run`/`plan cells` line: `prompt()` awaits it like a prompt."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # type: ignore[override]
        raise UsageError(f"%%agent: {message}. Usage: %%agent [--agent NAME] [--model PROVIDER/MODEL] "
                         "[--session ID | --new] [--bg], or %%agent --plan ID --step N for a plan's step")


def parse_options(args: str) -> argparse.Namespace:
    parser = _Parser(prog="%%agent", add_help=False)
    parser.add_argument("--agent", "-a")
    parser.add_argument("--model", "-m")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--session", "-s")
    group.add_argument("--new", "-n", action="store_true")
    parser.add_argument("--bg", action="store_true")
    parser.add_argument("--plan")
    parser.add_argument("--step", type=_step_number)
    try:
        words = shlex.split(args)
    except ValueError as exc:
        raise UsageError(f"%%agent: cannot read the options {args!r}: {exc}") from None
    options, rest = parser.parse_known_args(words)
    if rest:
        raise UsageError(f"%%agent: unknown option(s) {' '.join(rest)}; the prompt goes on the lines below "
                         "%%agent, or after %agent on one line")
    if options.step is not None and options.plan is None:
        raise UsageError("%%agent: --step needs --plan: a step belongs to a plan, e.g. %%agent --plan ID --step 2 "
                         "(%agent plan lists the plans)")
    if options.plan is not None:
        if options.step is None:
            raise UsageError(f"%%agent: --plan {options.plan} needs --step N: which step of the plan to carry out "
                             "(%agent plan run runs all that are left)")
        clash = [name for name, on in (("--agent", options.agent), ("--session", options.session),
                                       ("--new", options.new), ("--bg", options.bg)) if on]
        if clash:
            raise UsageError(f"%%agent: a plan step cannot take {', '.join(clash)}: it runs in its plan's session "
                             "with the build agent, attached so a failure stops the cells after it")
    return options


def _step_number(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"--step takes a step number (1, 2, …), not {value!r}")
    return int(value)


def parse_plan_line(args: list[str]) -> tuple[str, str | None, int | None] | None:
    """`list`, `run [ID] [--from N]` or `cells [ID]` after `%agent plan`: (action, plan id, from); None when
    the words are a prompt (`%agent plan this first`)."""
    if not args or args == ["list"]:
        return "list", None, None
    action, rest = args[0], args[1:]
    start: int | None = None
    if action == "run" and "--from" in rest:
        at = rest.index("--from")
        if at + 1 >= len(rest) or not rest[at + 1].isdigit() or int(rest[at + 1]) < 1:
            raise UsageError("%agent plan run: --from takes a step number, e.g. %agent plan run --from 2")
        start = int(rest[at + 1])
        rest = rest[:at] + rest[at + 2:]
    if action not in ("run", "cells") or len(rest) > 1 or any(word.startswith("-") for word in rest):
        return None
    return action, rest[0] if rest else None, start


def split_line(line: str) -> tuple[str | None, list[str]]:
    """A subcommand and its arguments, or (None, []) when the line is a prompt."""
    words = line.split()
    if not words:
        return "help", []  # a bare %agent says how to use it
    if words[0] not in SUBCOMMANDS:
        return None, []
    low, high = SUBCOMMANDS[words[0]]
    args = words[1:]
    if words[0] == "sessions" and args not in ([], ["--all"]):
        return None, []
    if words[0] == "plan" and parse_plan_line(args) is None:
        return None, []
    if words[0] == "undo" and len(args) == 2 and args[0] != "--to":
        return None, []
    if words[0] == "diff" and args and not args[0].isdigit():
        return None, []  # `%agent diff this` is a prompt
    if low <= len(args) <= high:
        return words[0], args
    return None, []


def split_prompt_line(line: str) -> tuple[str, str]:
    """`%agent --model m fix it` → ("--model m", "fix it"): leading options, then the prompt."""
    words = line.split(" ")
    options: list[str] = []
    flags = {"--bg", "--new", "-n"}
    valued = {"--agent", "-a", "--model", "-m", "--session", "-s"}
    i = 0
    while i < len(words):
        word = words[i]
        if word in flags:
            options.append(word)
            i += 1
        elif word in valued and i + 1 < len(words):
            options += [word, words[i + 1]]
            i += 2
        elif not word:
            i += 1
        else:
            break
    return " ".join(options), " ".join(words[i:])


@contextmanager
def usage_errors() -> Iterator[None]:
    """Our errors already say what is wrong and what to do: show them without a traceback into our code."""
    from ...errors import OpencodeNbError

    try:
        yield
    except OpencodeNbError as exc:
        raise UsageError(str(exc)) from None


@magics_class
class AgentMagics(Magics):
    def __init__(self, shell: Any, agent: NotebookAgent, display: Callable[[dict[str, str]], None]) -> None:
        super().__init__(shell)
        from .reconfig import ConfigWatch

        self.agent = agent
        self.display = display
        self.watch = ConfigWatch(agent)
        """Reads the configuration again when its files change, and says what it found."""

    @line_cell_magic
    def agent(self, line: str, cell: str | None = None) -> None:
        """Run a prompt with an agent, or manage sessions: `%agent help` says how."""
        # Reached only where the prompt cannot be awaited (inside a function or a block): run it detached.
        with usage_errors():
            prompt = (line, cell) if cell is not None else self.line(line)
            if prompt is None:
                return
            if prompt[0] == PLAN_COMMAND or "--plan" in prompt[0]:
                raise UsageError("%agent: plan steps run only from a cell of their own (%%agent --plan ID --step "
                                 "N, or %agent plan run on a line at the top of a cell), not from inside a block")
            self.notices()
            request = self.request(*prompt)
        coroutine = self.agent.prompt(**{**request, "background": True})
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(coroutine)  # terminal IPython without a running loop: run it to the end here
            return
        task = asyncio.ensure_future(coroutine)
        self.agent.background.add(task)
        task.add_done_callback(self._finished_in_background)

    def _finished_in_background(self, task: asyncio.Future[Any]) -> None:
        from . import listing

        self.agent.background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.display(listing.text(f"%agent: {task.exception()}"))  # nobody awaits it: show it in its cell

    def line(self, line: str) -> tuple[str, str] | None:
        """Show a subcommand's output, or return the arguments of `prompt()`: a one-line prompt split into
        (options, prompt), or (PLAN_COMMAND, args) for the plan subcommands that run steps or change cells."""
        command, args = split_line(line)
        if command == "plan" and args and args[0] in ("run", "cells"):
            self.notices()
            return PLAN_COMMAND, " ".join(args)
        if command is not None:
            if command not in QUIET_SUBCOMMANDS:
                self.notices()
            self.display(self.subcommand(command, args))
            return None
        return split_prompt_line(line)

    def notices(self) -> None:
        """Show what the person should know before the cell's own output: the configuration files changed
        (read again, or kept because they have problems), and its warnings, once."""
        from . import listing

        notes = self.watch.refresh()
        if notes:
            self.display(listing.text("\n".join(notes)))
        held = self.watch.held_prompt()
        if held is not None:
            self.display(held)

    def request(self, options: str, prompt: str) -> dict[str, Any]:
        """The arguments of `NotebookAgent.prompt` for a cell's options and prompt, checked before anything runs."""
        from ...command import parse_slash
        from . import preflight
        from .interpolate import interpolate

        parsed = parse_options(options)
        if not prompt.strip():
            raise UsageError("%%agent: the prompt is empty; write it on the lines below %%agent "
                             "(or after %agent on one line). %agent help lists the subcommands.")
        text = interpolate(prompt, self.shell.user_ns)
        if parse_slash(text) is None:  # a command names its own agent and model, and /help needs none
            settings = self.agent.settings
            preflight.check(self.agent.workspace(), agent=parsed.agent or settings.agent, model=parsed.model,
                            setting=settings.model,
                            session_id=None if parsed.new else parsed.session or self.agent.session_id)
        return {"text": text, "agent": parsed.agent, "model": parsed.model,
                "session": parsed.session, "new": parsed.new, "background": parsed.bg}

    async def prompt(self, options: str, prompt: str) -> None:
        from ... import id as ids
        from ..plans import steps as plans

        if options == PLAN_COMMAND:
            parsed = parse_plan_line(prompt.split())
            assert parsed is not None
            action, plan_id, start = parsed
            if action == "cells":
                shown = await plans.cells_here(self.agent, plan_id)
            else:
                shown = await plans.run_remaining(self.agent, plan_id, start)
            if shown is not None:
                self.display(shown)
            return
        parsed_options = parse_options(options)
        await self.agent.aworkspace()  # built on a worker thread: wait for it without blocking the kernel
        self.notices()
        if parsed_options.plan is not None:
            await plans.run_step(self.agent, parsed_options.plan, parsed_options.step, prompt,
                                 model=parsed_options.model)
            return
        request = self.request(options, prompt)
        floor = ids.ascending("message")
        try:
            await self.agent.prompt(**request)
        except BaseException:
            self.forget_if_empty()
            raise
        if not request["background"] and (not self.agent.detached or self.agent.presence.mode == "headless"):
            from ..plans.approved import run_approved

            await run_approved(self.agent, floor)  # the cell awaited the run: a plan it approved runs now

    def forget_if_empty(self) -> None:
        """After a failed or stopped prompt, or on leaving a session: if the notebook's session was never
        written to, it is deleted rather than listed forever as an empty "New session"; the next prompt
        starts a fresh one."""
        session_id = self.agent.session_id
        if session_id is None:
            return
        try:
            if self.agent.workspace().sessions.discard_if_empty(session_id):
                self.agent.session_id = None
        except Exception:  # the failure being raised says more than this cleanup could
            pass

    def tool_command(self, ws: Any, args: list[str]) -> str:
        """`%agent tool add|remove NAME`, `%agent tool list`, `%agent tools` (see `person_tools.py`)."""
        tools = self.agent.person_tools
        action, name = (*args, "")[:2] if args else ("list", "")
        if action == "list" and not name:
            from .preflight import agent_for

            chosen = agent_for(ws, self.agent.settings.agent, self.agent.session_id)
            return tools.describe(list(chosen.permission), chosen.name)
        if action in ("add", "remove") and name:
            try:
                return tools.add(name) if action == "add" else tools.remove(name)
            except (LookupError, TypeError, ValueError) as exc:
                raise UsageError(str(exc)) from None
        raise UsageError("%agent tool add NAME, %agent tool remove NAME or %agent tool list")

    def subcommand(self, command: str, args: list[str]) -> dict[str, str]:
        from . import listing

        agent = self.agent
        if command == "help":
            return listing.text(HELP)
        if command == "stop":
            count = agent.stop()
            return listing.text(f"Stopped {count} running agent{'s' * (count != 1)}." if count else
                                "No agent is running in this notebook.")
        if command == "reload":
            ws = self.watch.reload()
            return listing.text(f"Configuration read again from {ws.directory}"
                                + "".join(f"\n  {s}" for s in ws.loaded.sources)
                                + "".join(f"\n{w}" for w in self.watch.warnings(ws)))
        ws = agent.workspace()
        if command == "sessions":
            return listing.sessions(ws, notebook=agent.notebook_path, current=agent.session_id,
                                    everything=args == ["--all"])
        if command == "resume":
            session = ws.sessions.get(args[0])
            if session.id != agent.session_id:
                self.forget_if_empty()
            agent.session_id = session.id
            return listing.text(f"The next prompt continues “{session.title}” ({session.id}).")
        if command == "show":
            from ...views.transcript import transcript_bundle

            session_id = args[0] if args else agent.session_id
            if session_id is None:
                return listing.text("No session yet in this notebook; %agent sessions lists the project's.")
            session_id = ws.sessions.get(session_id).id
            return transcript_bundle(ws, session_id, prompts=True, status=listing.session_state(ws, session_id))
        if command == "new":
            self.forget_if_empty()  # `%agent new` twice: the first one was never used
            session_id = agent.new_session(ws)
            return listing.text(f"Started a new session ({session_id}); the next prompt goes to it.")
        if command == "agents":
            return listing.agents(ws)
        if command == "skills":
            from .preflight import agent_for

            return listing.skills(ws, agent_for(ws, agent.settings.agent, agent.session_id))
        if command == "mcp":
            from ...mcp import describe
            from .preflight import agent_for

            chosen = agent_for(ws, agent.settings.agent, agent.session_id)
            return listing.text(describe(ws.mcp.states(), list(chosen.permission), chosen.name))
        if command in ("tool", "tools"):
            return listing.text(self.tool_command(ws, args))
        if command == "models":
            from .preflight import agent_for, default_model, model_in_use

            in_use = model_in_use(ws, option=None, setting=agent.settings.model,
                                  agent=agent_for(ws, agent.settings.agent, agent.session_id))
            return listing.models(ws, in_use, default_model(ws))
        if command == "permissions":
            from .preflight import agent_for

            # The agent the next prompt goes to, chosen as the loop chooses it.
            name = agent_for(ws, agent.settings.agent, agent.session_id).name
            return listing.permissions(ws, name, agent.session_id, mode=agent.presence.mode,
                                       policy=agent.settings.permission, reason=agent.presence.reason)
        if command == "config":
            from .settings import explain_settings

            if args:
                return listing.text(self.watch.answer(args[0]))
            notices = [] if not self.watch.kept else [
                "the files changed since and cannot be used: this is the configuration read before "
                "(%agent reload says what is wrong)"]
            if ws.config_held is not None:
                notices.append("a change of the files loosens what agents may do and waits for you: it is not in "
                               "force; %agent config accept applies it, %agent config keep keeps this one")
            return listing.config(ws, explain_settings(agent.settings), notices)
        if command == "plan":
            from ..plans import steps as plans

            return plans.list_plans(agent)
        if command in ("undo", "redo"):  # cells may need the front end: an awaitable bundle, shown when ready
            from . import undoing
        if command == "undo":
            if args[:1] == ["--to"]:
                if len(args) != 2:
                    raise UsageError("%agent undo --to takes a turn number or a message id (%agent checkpoints "
                                     "lists them), e.g. %agent undo --to 2")
                return undoing.undo(agent, to=args[1])  # type: ignore[return-value]
            return undoing.undo(agent, args[0] if args else None)  # type: ignore[return-value]
        if command == "redo":
            return undoing.redo(agent)  # type: ignore[return-value]
        if command in ("checkpoints", "diff"):
            from . import checkpoints

            if command == "diff":
                return checkpoints.diff(ws, agent.session_id, args[0] if args else None)
            notebook = ws.notebook
            return checkpoints.checkpoints(ws, agent.journal, getattr(notebook, "runner", None), agent.session_id)
        raise UsageError(f"%agent: unknown subcommand {command}")
