"""The `%agent` subcommands: each one is its handler below, declared once with its arguments and help lines.

`TABLE` is what `%agent help`, telling a subcommand from a prompt, completion and dispatch read
(`grammar.py`). A new subcommand is one more `@TABLE.declare(...)` function here; its output goes through
`listing.py` (HTML with a plain-text twin).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from . import listing
from .grammar import Grammar, Magic, Shown, Slot

if TYPE_CHECKING:
    from ...workspace import Workspace

PRELUDE = """\
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
cells below (Run All goes on after them); with --bg the notebook runs the step cells once the prompt ends.

In a prompt: /command args runs a slash command, @agent hands the prompt to a subagent, @path attaches a
file, {var} inserts a notebook variable ({{ and }} for literal braces)."""

EPILOGUE = """\
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

TABLE = Grammar(prelude=PRELUDE, epilogue=EPILOGUE)

WORD = Slot("WORD")
ID = Slot("ID", lambda word: not word.startswith("-"))
"""A plan's id: a word that is not an option."""
DIGITS = Slot("N", str.isdigit)


def _step(word: str) -> bool:
    return word.isdigit() and int(word) >= 1


STEP = Slot("N", _step)


@TABLE.declare("sessions", shapes=((), ("--all",)), help=(
    ("sessions [--all]", "this notebook's sessions, children indented (--all: every notebook's)"),))
def _sessions(magics: Magic, args: list[str]) -> Shown:
    agent = magics.agent
    return listing.sessions(agent.workspace(), notebook=agent.notebook_path, current=agent.session_id,
                            everything=args == ["--all"])


@TABLE.declare("resume", shapes=((WORD,),), help=(("resume ID", "continue session ID from the next prompt"),))
def _resume(magics: Magic, args: list[str]) -> Shown:
    agent = magics.agent
    session = agent.workspace().sessions.get(args[0])
    if session.id != agent.session_id:
        magics.forget_if_empty()
    agent.session_id = session.id
    return listing.text(f"The next prompt continues “{session.title}” ({session.id}).")


@TABLE.declare("show", shapes=((), (WORD,)), help=(
    ("show [ID]", "the transcript of a session (default: the current one)"),))
def _show(magics: Magic, args: list[str]) -> Shown:
    from ...views.transcript import transcript_bundle

    agent = magics.agent
    ws = agent.workspace()
    session_id = args[0] if args else agent.session_id
    if session_id is None:
        return listing.text("No session yet in this notebook; %agent sessions lists the project's.")
    session_id = ws.sessions.get(session_id).id
    return transcript_bundle(ws, session_id, prompts=True, status=listing.session_state(ws, session_id))


@TABLE.declare("new", help=(("new", "start a new session from the next prompt"),))
def _new(magics: Magic, args: list[str]) -> Shown:
    ws = magics.agent.workspace()
    magics.forget_if_empty()  # `%agent new` twice: the first one was never used
    session_id = magics.agent.new_session(ws)
    return listing.text(f"Started a new session ({session_id}); the next prompt goes to it.")


@TABLE.declare("agents", help=(("agents", "the agents, their modes and models"),))
def _agents(magics: Magic, args: list[str]) -> Shown:
    return listing.agents(magics.agent.workspace())


@TABLE.declare("skills", help=(("skills", "the skills agents may load (SKILL.md folders), where each came from, "
                                          "the ones a\nnearer skill shadows and the files that cannot be used"),))
def _skills(magics: Magic, args: list[str]) -> Shown:
    from .preflight import agent_for

    agent = magics.agent
    ws = agent.workspace()
    return listing.skills(ws, agent_for(ws, agent.settings.agent, agent.session_id))


@TABLE.declare("mcp", help=(("mcp", "the MCP servers: starting, ready, failed (and why) or waiting for your "
                                    "approval;\ntheir tools and the rule each call meets"),))
def _mcp(magics: Magic, args: list[str]) -> Shown:
    from ...mcp.report import describe
    from .preflight import agent_for

    agent = magics.agent
    ws = agent.workspace()
    chosen = agent_for(ws, agent.settings.agent, agent.session_id)
    return listing.text(describe(ws.mcp.states(), list(chosen.permission), chosen.name))


@TABLE.declare("hooks", help=(("hooks", "the command hooks and plugins: where each came from, whether it may run "
                                        "(a project's\nhooks wait for your approval) and how it last ran"),))
def _hooks(magics: Magic, args: list[str]) -> Shown:
    from ...hook.report import describe

    return listing.text(describe(magics.agent.workspace().hooks))


TOOL_ACTIONS = Slot("add|remove|list", choices=("add", "remove", "list"))


@TABLE.declare("tool", shapes=((TOOL_ACTIONS,), (TOOL_ACTIONS, WORD)), help=(
    ("tool add NAME", "offer your function NAME to the agents as a tool (or decorate it: from opencode_nb\n"
                      "import tool; @tool); each call asks first unless a rule names it (query: allow)"),
    ("tool remove NAME", "stop offering it"),
    ("tool list", "your functions offered as tools (also %agent tools): parameters and the rule in force")))
def _tool(magics: Magic, args: list[str]) -> Shown:
    """`%agent tool add|remove NAME`, `%agent tool list` (see `person_tools.py`)."""
    agent = magics.agent
    ws = agent.workspace()
    tools = agent.person_tools
    action, name = (*args, "")[:2] if args else ("list", "")
    if action == "list" and not name:
        from .preflight import agent_for

        chosen = agent_for(ws, agent.settings.agent, agent.session_id)
        return listing.text(tools.describe(list(chosen.permission), chosen.name))
    if action in ("add", "remove") and name:
        try:
            return listing.text(tools.add(name) if action == "add" else tools.remove(name))
        except (LookupError, TypeError, ValueError) as exc:
            raise UsageError(str(exc)) from None
    raise UsageError("%agent tool add NAME, %agent tool remove NAME or %agent tool list")


@TABLE.declare("tools")  # its help is `tool list`'s
def _tools(magics: Magic, args: list[str]) -> Shown:
    return _tool(magics, [])


@TABLE.declare("models", help=(("models", "the models known here, the one in use (and what chose it), the "
                                          "default, and what\neach provider still needs"),))
def _models(magics: Magic, args: list[str]) -> Shown:
    from .preflight import agent_for, default_model, model_in_use

    agent = magics.agent
    ws = agent.workspace()
    in_use = model_in_use(ws, option=None, setting=agent.settings.model,
                          agent=agent_for(ws, agent.settings.agent, agent.session_id))
    return listing.models(ws, in_use, default_model(ws))


@TABLE.declare("permissions", help=(
    ("permissions", "what the agent may do, per permission; the rules behind it (last match wins)\n"
                    "and the \"always\" approvals of this session"),))
def _permissions(magics: Magic, args: list[str]) -> Shown:
    from .preflight import agent_for

    agent = magics.agent
    ws = agent.workspace()
    name = agent_for(ws, agent.settings.agent, agent.session_id).name  # the next prompt's, as the loop chooses
    return listing.permissions(ws, name, agent.session_id, mode=agent.presence.mode,
                               policy=agent.settings.permission, reason=agent.presence.reason)


@TABLE.declare("stop", quiet=True, help=(("stop", "stop every running agent of this notebook"),))
def _stop(magics: Magic, args: list[str]) -> Shown:
    count = magics.agent.stop()
    return listing.text(f"Stopped {count} running agent{'s' * (count != 1)}." if count else
                        "No agent is running in this notebook.")


CONFIG_CHOICES = Slot("accept|keep", choices=("accept", "keep"))


@TABLE.declare("config", shapes=((), (CONFIG_CHOICES,)), help=(
    ("config", "the configuration in force, defaults included, secrets masked, and where each\n"
               "value came from (default, file:line, $VARIABLE, %config)"),
    ("config accept|keep", "apply a configuration change that agents may have made and that loosens what they\n"
                           "may do, or keep the configuration confirmed before (the change's prompt says what)")))
def _config(magics: Magic, args: list[str]) -> Shown:
    from .settings import explain_settings

    ws = magics.agent.workspace()
    if args:
        return listing.text(magics.watch.answer(args[0]))
    notices = [] if not magics.watch.kept else [
        "the files changed since and cannot be used: this is the configuration read before "
        "(%agent reload says what is wrong)"]
    if ws.config_held is not None:
        notices.append("a change of the files loosens what agents may do and waits for you: it is not in "
                       "force; %agent config accept applies it, %agent config keep keeps this one")
    notices += ws.managed_notices()
    return listing.config(ws, explain_settings(magics.agent.settings), notices)


UNDO_HELP = (
    ("undo [RUN]", "take back the latest turn in one step: the files it changed (whoever wrote them), the\n"
                   "cells it inserted, edited or deleted and the names its live python bound; the model no\n"
                   "longer sees the turn. A file or name you changed since is yours: the undo shows what it\n"
                   "would overwrite and asks (headless: keeps yours and says so). RUN: one python run only"),
    ("undo --to N|MESSAGE", "take back turn N (or the turn of that message) and every later one"))


@TABLE.declare("undo", shapes=((), (WORD,), ("--to", WORD)), help=UNDO_HELP)
def _undo(magics: Magic, args: list[str]) -> Shown:
    """Cells may need the front end: an awaitable bundle, shown when ready."""
    from . import undoing

    agent = magics.agent
    agent.workspace()  # a configuration that cannot be read fails the cell now, as for any subcommand
    if args[:1] == ["--to"]:
        if len(args) != 2:
            raise UsageError("%agent undo --to takes a turn number or a message id (%agent checkpoints "
                             "lists them), e.g. %agent undo --to 2")
        return undoing.undo(agent, to=args[1])
    return undoing.undo(agent, args[0] if args else None)


@TABLE.declare("redo", help=(("redo", "put back what the latest undo took (until the next prompt)"),))
def _redo(magics: Magic, args: list[str]) -> Shown:
    from . import undoing

    magics.agent.workspace()  # as for undo
    return undoing.redo(magics.agent)


def _change(word: str) -> bool:
    return word == "all" or (word.isdigit() and int(word) >= 1)


CHANGE = Slot("N|all", _change, choices=("all",))
"""A pending cell change's number, or `all`."""
ACCEPT_SHAPES = ((), ("--no-run",), (CHANGE,), (CHANGE, "--no-run"), (CHANGE, "--anyway"),
                 (CHANGE, "--anyway", "--no-run"), (CHANGE, "--no-run", "--anyway"))


def decision_check(verb: str) -> Callable[[list[str]], None]:
    """`%agent accept 0`, `%agent reject 2 3`: a number after accept or reject means a change, whatever else
    the line says; one that does not fit is an error, not a prompt."""
    def check(args: list[str]) -> None:
        if args and args[0].isdigit() and not TABLE[verb].fits(args):
            options = "; it may add --no-run or --anyway" if verb == "accept" else ""
            raise UsageError(f"%agent {verb} takes one change number (1, 2, …, as its card or %agent pending shows "
                             f"it) or all, e.g. %agent {verb} 2 or %agent {verb} all{options}")
    return check


@TABLE.declare("accept", shapes=ACCEPT_SHAPES, check=decision_check("accept"), help=(
    ("accept [N|all]", "apply the cell change N an agent proposed (review: cells, a Fix) and run the cell\n"
                       "(--no-run: do not run it; --anyway: even over your later edit of the cell); no N:\n"
                       "the one pending change"),))
def _accept(magics: Magic, args: list[str]) -> Shown:
    from . import deciding

    return deciding.decide(magics.agent, "accept", args)


@TABLE.declare("reject", shapes=((), (CHANGE,)), check=decision_check("reject"), help=(
    ("reject [N|all]", "discard the proposed cell change N (the notebook stays as it is); the agent is\n"
                       "told at its next turn"),))
def _reject(magics: Magic, args: list[str]) -> Shown:
    from . import deciding

    return deciding.decide(magics.agent, "reject", args)


@TABLE.declare("pending", help=(("pending", "the proposed cell changes waiting for you, with their diffs"),))
def _pending(magics: Magic, args: list[str]) -> Shown:
    from . import deciding

    magics.agent.workspace()
    return deciding.listed(magics.agent)


@TABLE.declare("checkpoints", help=(
    ("checkpoints", "the session's turns and what each changed: files (+/- lines), cells, names"),))
def _checkpoints(magics: Magic, args: list[str]) -> Shown:
    from . import checkpoints

    agent = magics.agent
    ws = agent.workspace()
    return checkpoints.checkpoints(ws, agent.journal, getattr(ws.notebook, "runner", None), agent.session_id)


@TABLE.declare("diff", shapes=((), (DIGITS,)), help=(
    ("diff [N]", "the file diff of turn N (default: the latest)"),))
def _diff(magics: Magic, args: list[str]) -> Shown:
    from . import checkpoints

    ws: Workspace = magics.agent.workspace()
    return checkpoints.diff(ws, magics.agent.session_id, args[0] if args else None)


def check_plan_line(args: list[str]) -> None:
    """`%agent plan run … --from X` is meant as the subcommand whatever else it says: a bad X is an error,
    not a prompt."""
    rest = args[1:]
    if args[:1] == ["run"] and "--from" in rest:
        at = rest.index("--from")
        if at + 1 >= len(rest) or not _step(rest[at + 1]):
            raise UsageError("%agent plan run: --from takes a step number, e.g. %agent plan run --from 2")


def parse_plan_line(args: list[str]) -> tuple[str, str | None, int | None] | None:
    """`list`, `run [ID] [--from N]` or `cells [ID]` after `%agent plan`: (action, plan id, from); None when
    the words are a prompt (`%agent plan this first`)."""
    check_plan_line(args)
    if not TABLE["plan"].fits(args):
        return None
    if not args or args == ["list"]:
        return "list", None, None
    action, rest = args[0], args[1:]
    start: int | None = None
    if "--from" in rest:
        at = rest.index("--from")
        start = int(rest[at + 1])
        rest = rest[:at] + rest[at + 2:]
    return action, rest[0] if rest else None, start


async def _run_plan(magics: Magic, args: list[str]) -> None:
    from ..plans import steps as plans

    parsed = parse_plan_line(args)
    assert parsed is not None, "only lines that fit `plan run` or `plan cells` are awaited"
    action, plan_id, start = parsed
    shown: dict[str, str] | None
    if action == "cells":
        shown = await plans.cells_here(magics.agent, plan_id)
    else:
        shown = await plans.run_remaining(magics.agent, plan_id, start)
    if shown is not None:
        magics.display(shown)


PLAN_SHAPES = ((), ("list",), ("run",), ("run", ID), ("run", "--from", STEP), ("run", ID, "--from", STEP),
               ("run", "--from", STEP, ID), ("cells",), ("cells", ID))


@TABLE.declare("plan", shapes=PLAN_SHAPES, check=check_plan_line, runs=("run", "cells"), run=_run_plan, help=(
    ("plan [list]", "this project's plans (.opencode/plans/) and how far each has got"),
    ("plan run [ID] [--from N]", "run the plan's unticked steps (or steps N onwards) one by one, each shown in "
                                 "its\ncell, stopping at the first failure; default: this notebook's latest plan"),
    ("plan cells [ID]", "save the plan as cells under this cell (default: the current session's plan)")))
def _plan(magics: Magic, args: list[str]) -> Shown:
    from ..plans.listing import list_plans

    return list_plans(magics.agent)


def _cell_word(word: str) -> bool:
    """A cell id (JupyterLab's hold digits) or an execution count (`5`, `[5]`); a plain word (`%agent fix it`)
    stays a prompt."""
    return not word.startswith("-") and any(c.isdigit() for c in word)


CELL = Slot("CELL", _cell_word)
AGENT_OPTION = Slot("--agent", lambda word: word in ("--agent", "-a"), choices=("--agent",))
MODEL_OPTION = Slot("--model", lambda word: word in ("--model", "-m"), choices=("--model",))


def _fix_shapes() -> tuple[tuple[str | Slot, ...], ...]:
    """`[CELL]` with `--agent NAME` and `--model P/M` in any order, the cell first or last."""
    options: list[tuple[str | Slot, ...]] = [(), (AGENT_OPTION, WORD), (MODEL_OPTION, WORD),
                                             (AGENT_OPTION, WORD, MODEL_OPTION, WORD),
                                             (MODEL_OPTION, WORD, AGENT_OPTION, WORD)]
    shapes = [*options, *((CELL, *o) for o in options), *((*o, CELL) for o in options if o)]
    return tuple(shapes)


FIX_SHAPES = _fix_shapes()


async def _run_fix(magics: Magic, args: list[str]) -> None:
    from ..fix.runs import run
    from ..fix.saved import adopt_saved

    await adopt_saved(magics.agent, args, "fix")  # an error this kernel did not see: the cell's saved output
    await run(magics, args, "fix")


async def _run_explain(magics: Magic, args: list[str]) -> None:
    from ..fix.runs import run
    from ..fix.saved import adopt_saved

    await adopt_saved(magics.agent, args, "explain")
    await run(magics, args, "explain")


@TABLE.declare("fix", shapes=FIX_SHAPES, run=_run_fix, agent_run=True, help=(
    ("fix [CELL] [--agent A] [--model M]",
     "find why the cell failed and propose new source for it (and for cells above where\n"
     "the cause is) as changes you accept or reject, cell by cell. CELL: a cell id, or N\n"
     "for In [N]; default: the last cell that raised"),))
def _fix(magics: Magic, args: list[str]) -> Shown:
    raise UsageError("%agent fix runs from a line at the top of a cell")  # every line of it runs: see `run`


@TABLE.declare("explain", shapes=FIX_SHAPES, run=_run_explain, agent_run=True, help=(
    ("explain [CELL] [--agent A] [--model M]", "a short explanation of why the cell failed and what to try; "
                                               "changes nothing"),))
def _explain(magics: Magic, args: list[str]) -> Shown:
    raise UsageError("%agent explain runs from a line at the top of a cell")


@TABLE.declare("reload", quiet=True, help=(
    ("reload", "read the configuration files again now (each %agent cell does it anyway when\n"
               "opencode.yaml or an agent file changed; a file with problems keeps the previous one)"),))
def _reload(magics: Magic, args: list[str]) -> Shown:
    ws = magics.watch.reload()
    return listing.text(f"Configuration read again from {ws.directory}"
                        + "".join(f"\n  {s}" for s in ws.loaded.sources)
                        + "".join(f"\n{w}" for w in magics.watch.warnings(ws)))


@TABLE.declare("help", quiet=True, help=(("help", "this text"),))
def _help(magics: Magic, args: list[str]) -> Shown:
    return listing.text(TABLE.help())


HELP = TABLE.help()
"""`%agent help`, as the declarations above make it."""


def split_line(line: str) -> tuple[str | None, list[str]]:
    """A subcommand and its arguments, or (None, []) when the line is a prompt."""
    return TABLE.split(line)
