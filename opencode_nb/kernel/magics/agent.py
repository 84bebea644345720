"""`%agent` and `%%agent`: reading what the person typed and handing it to the notebook agent.

Prompt cells normally never reach the magic: the input transformer turns them into awaited calls of
`run_cell`/`run_line`. The magic itself serves subcommands (declared in `subcommands.py`), and prompts
typed where an await is impossible (inside a function), which then run detached.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

if TYPE_CHECKING:
    from ..runner import NotebookAgent
    from .grammar import Shown, Subcommand

_F = TypeVar("_F", bound=Callable[..., Any])

RUNS = "%agent "
"""`line()` returns `%agent NAME` as the options of a subcommand line that runs rather than shows (`plan run`,
`plan cells`): `prompt()` awaits the subcommand's `run` like a prompt."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
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
        known = [name for action in parser._actions for name in action.option_strings]
        meant = difflib.get_close_matches(rest[0].split("=", 1)[0], known, n=1, cutoff=0.7)
        guess = f" (did you mean {meant[0]}?)" if meant else ""
        raise UsageError(f"%%agent: unknown option(s) {' '.join(rest)}{guess}; the prompt goes on the lines below "
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


LINE_FLAGS = ("--bg", "--new", "-n")
LINE_VALUED = ("--agent", "-a", "--model", "-m", "--session", "-s")
"""The options a one-line prompt takes before its text (a plan's `--plan`/`--step` need a cell of their own)."""


def split_prompt_line(line: str) -> tuple[str, str]:
    """`%agent --model m fix it` → ("--model m", "fix it"): leading options, then the prompt.

    Raises:
        UsageError: the prompt would start with an option the line does not take (`--bogus`, `--model` with no
            value): a mistyped option is said, not sent to the model as the first word of the prompt.
    """
    words = line.split(" ")
    options: list[str] = []
    flags, valued = set(LINE_FLAGS), set(LINE_VALUED)
    i = 0
    while i < len(words):
        word = words[i]
        if word in flags or ("=" in word and word.split("=", 1)[0] in valued):
            options.append(word)
            i += 1
        elif word in valued and i + 1 < len(words):
            options += [word, words[i + 1]]
            i += 2
        elif not word:
            i += 1
        else:
            break
    if i < len(words):
        refuse_unknown_option(words[i])
    return " ".join(options), " ".join(words[i:])


def refuse_unknown_option(word: str) -> None:
    """Raise if `word`, the first of a one-line prompt, reads as an option rather than as its text."""
    from .grammar import AS_PROMPT, OPTION

    if not OPTION.match(word):
        return
    name = word.split("=", 1)[0]
    if name in LINE_VALUED:
        raise UsageError(f"%agent: {name} needs a value before the prompt, e.g. %agent {name} VALUE explain this")
    if name in ("--plan", "--step"):
        raise UsageError("%agent: a plan's step runs from a cell of its own: %%agent --plan ID --step N")
    meant = difflib.get_close_matches(name, [*LINE_FLAGS, *LINE_VALUED], n=1, cutoff=0.7)
    guess = f"; did you mean {meant[0]}?" if meant else "."
    raise UsageError(f"%agent: {name} is not an option of a prompt (they are {', '.join(LINE_VALUED[::2])} VALUE, "
                     f"{', '.join(LINE_FLAGS[:2])}){guess} {AS_PROMPT}")


@contextmanager
def usage_errors() -> Iterator[None]:
    """Our errors already say what is wrong and what to do: show them without a traceback into our code, as
    prose that wraps between words (`usage.py`; the mark tells its handler the error is ours)."""
    from ...errors import OpencodeNbError
    from .usage import mark_ours

    try:
        yield
    except UsageError as exc:
        raise mark_ours(exc) from None
    except OpencodeNbError as exc:
        raise mark_ours(UsageError(str(exc))) from None


_named_agent = cast("Callable[[_F], _F]", line_cell_magic("agent"))
"""The `%agent` magic, on a method of another name: `self.agent` is the notebook agent. (IPython types the
result of the named form as a union with the bare one's.)"""


@magics_class
class AgentMagics(Magics):
    agent: NotebookAgent
    display: Callable[[Shown], None]

    def __init__(self, shell: Any, agent: NotebookAgent, display: Callable[[Shown], None]) -> None:
        super().__init__(shell)
        from .reconfig import ConfigWatch

        self.agent = agent
        self.display = display
        self.watch = ConfigWatch(agent)
        """Reads the configuration again when its files change, and says what it found."""
        agent.gate = self.watch.refuse_prompt  # every agent run asks it before it starts

    @_named_agent
    def agent_magic(self, line: str, cell: str | None = None) -> None:
        """Run a prompt with an agent, or manage sessions: `%agent help` says how."""
        # Reached only where the prompt cannot be awaited (inside a function or a block): run it detached.
        with usage_errors():
            prompt = (line, cell) if cell is not None else self.line(line)
            if prompt is None:
                return
            if awaited(prompt[0]) is not None or "--plan" in prompt[0]:
                raise UsageError("%agent: plan steps, fix and explain run only from a cell of their own (%%agent "
                                 "--plan ID --step N, or %agent plan run, fix or explain on a line at the top of a "
                                 "cell), not from inside a block")
            self.notices(runs=True)
            self.agent.gate()  # here, not in the task: the cell that asked says why nothing runs
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

    @staticmethod
    def check_line(line: str) -> None:
        """Raise the UsageError a mistyped line gets (`%agent sesions`, `%agent --bogus x`), saying nothing else."""
        from .subcommands import TABLE

        command, _ = TABLE.split(line)
        if command is None:
            split_prompt_line(line)

    def line(self, line: str) -> tuple[str, str] | None:
        """Show a subcommand's output, or return the arguments of `prompt()`: a one-line prompt split into
        (options, prompt), or (`%agent NAME`, args) for the subcommands that run (plan steps, plan cells)."""
        from .subcommands import TABLE

        command, args = TABLE.split(line)
        if command is None:
            return split_prompt_line(line)
        if TABLE[command].awaited(args):
            self.notices(runs=TABLE[command].starts_run(args))
            return RUNS + command, " ".join(args)
        if not TABLE[command].quiet:
            self.notices()
        self.display(self.subcommand(command, args))
        return None

    def notices(self, *, runs: bool = False) -> None:
        """Show what the person should know before the cell's own output: the configuration files changed
        (read again, or kept because they have problems), and its warnings, once. `runs`: the cell starts an
        agent run, whose refusal says a mistake that blocks it."""
        from . import listing

        notes = self.watch.refresh(runs=runs)
        if notes:
            self.display(listing.text("\n".join(notes)))
        held = self.watch.held_prompt()
        if held is not None:
            self.display(held)

    def request(self, options: str, prompt: str) -> dict[str, Any]:
        """The arguments of `NotebookAgent.prompt` for a cell's options and prompt, checked before anything runs."""
        from ...command.runner import parse_slash
        from .interpolate import interpolate

        parsed = parse_options(options)
        if not prompt.strip():
            raise UsageError("%%agent: the prompt is empty; write it on the lines below %%agent "
                             "(or after %agent on one line). %agent help lists the subcommands.")
        text = interpolate(prompt, self.shell.user_ns if self.shell is not None else {})
        self.agent.gate()  # a mistake that blocks runs is the reason, before whatever it broke
        if parse_slash(text) is None:  # a command names its own agent and model, and /help needs none
            self.check_start(parsed)
        return {"text": text, "agent": parsed.agent, "model": parsed.model,
                "session": parsed.session, "new": parsed.new, "background": parsed.bg}

    def check_start(self, parsed: argparse.Namespace) -> None:
        """Fail now if the prompt could not start; a model id that cannot be served is said with where it came
        from (`--model`, `%config Agent.model`, `opencode.yaml:3`), never as if a file were wrong."""
        from ...provider.registry import ModelIdError
        from . import preflight

        settings = self.agent.settings
        ws = self.agent.workspace()
        agent = parsed.agent or settings.agent
        session_id = None if parsed.new else parsed.session or self.agent.session_id
        try:
            preflight.check(ws, agent=agent, model=parsed.model, setting=settings.model, session_id=session_id)
        except ModelIdError as exc:
            choice = preflight.model_in_use(ws, option=parsed.model, setting=settings.model,
                                            agent=preflight.agent_for(ws, agent, session_id))
            raise UsageError(f"{choice.why}: {exc}") from None

    async def prompt(self, options: str, prompt: str) -> None:
        from ... import id as ids
        from ..plans import steps as plans

        runs = awaited(options)
        if runs is not None and runs.run is not None:
            await runs.run(self, prompt.split())
            return
        parsed_options = parse_options(options)
        await self.agent.aworkspace()  # built on a worker thread: wait for it without blocking the kernel
        self.notices(runs=True)
        if parsed_options.plan is not None:
            await plans.run_step(self.agent, parsed_options.plan, parsed_options.step, prompt,
                                 model=parsed_options.model)
            return
        request = self.request(options, prompt)
        floor = ids.ascending("message")
        try:
            detached = await self.agent.prompt(**request)
        except BaseException:
            self.forget_if_empty()
            raise
        from ..plans.approved import after_prompt

        await after_prompt(self.agent, floor, detached)  # a plan it approved to run now runs: here, or as cells

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

    def subcommand(self, command: str, args: list[str]) -> Shown:
        """The answer of a subcommand `split_line` found, from its declaration in `subcommands.TABLE`."""
        from .subcommands import TABLE

        return TABLE[command].handler(self, args)


def awaited(options: str) -> Subcommand | None:
    """The subcommand whose run `options` name (`line()` returned them), if they name one."""
    from .subcommands import TABLE

    sub = TABLE.subcommands.get(options.removeprefix(RUNS)) if options.startswith(RUNS) else None
    return sub if sub is not None and sub.run is not None else None
