"""`%agent fix [CELL]` and `%agent explain [CELL]`: a prompt run about a failed cell, shown in the cell that asked.

Both are prompt runs of the notebook's session, through the same machinery as a `%%agent` cell
(`NotebookAgent.prompt`: the gate every run passes, the card, asks, Stop, Undo, the transcript), by the build
agent unless `--agent` names another. The card's prompt is one short line (`Fix cell [ab12] (In [5]):
KeyError: 'revenue'`); the instructions and the gathered context (`context.py`) go with it as a part the
model reads and the transcript does not show. Neither lists the notebook's variables in the system prompt:
the context describes those the cell reads, and the rest stay unnamed.

Fix makes the session's cell changes pending changes for the person to accept or reject
(`agent.pending.force_review`), whatever `review:` says; where the person reviews them in place, the Fix cell
then waits until they are decided (`review.py`). Explain answers under rules that deny every change
(`overlay.py`), for that answer only.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Literal

from IPython.core.error import UsageError

from .context import context_text
from .overlay import explain_rules
from .review import wait_for_review

if TYPE_CHECKING:
    from ..magics.grammar import Magic

Kind = Literal["fix", "explain"]

DEFAULT_AGENT = "build"
VERBS = {"fix": "Fix", "explain": "Explain"}


@dataclass(frozen=True)
class FixRequest:
    """What a `%agent fix|explain` line asks: the cell (None: the last that raised), the agent and the model."""

    cell: str | None = None
    agent: str | None = None
    model: str | None = None


def parse_request(kind: Kind, args: list[str]) -> FixRequest:
    """`[CELL] [--agent NAME] [--model P/M]` in any order (the grammar's shapes already fit them).

    Raises:
        UsageError: an option without its value, or two cells.
    """
    cell = agent = model = None
    words = iter(args)
    for word in words:
        if word in ("--agent", "-a", "--model", "-m"):
            value = next(words, None)
            if value is None:
                raise UsageError(f"%agent {kind}: {word} needs a value, e.g. %agent {kind} {word} "
                                 f"{'plan' if word in ('--agent', '-a') else 'anthropic/claude-sonnet-4-6'}")
            if word in ("--agent", "-a"):
                agent = value
            else:
                model = value
        elif cell is None:
            cell = word
        else:
            raise UsageError(f"%agent {kind} takes one cell (its id, or In [N] as N), not {cell} and {word}")
    return FixRequest(cell, agent, model)


@cache
def instructions(kind: Kind) -> str:
    return files(__package__).joinpath("prompts", f"{kind}.txt").read_text(encoding="utf-8").strip()


async def run(magics: Magic, args: list[str], kind: Kind) -> None:
    """Run Fix or Explain for the cell `args` name, awaited by the cell that asked, whose output is its card.

    Raises:
        UsageError: no run may start now, no such failure, or the agent or model cannot be used.
    """
    from ...session.models import TextPart

    request = parse_request(kind, args)
    agent = magics.agent
    ws = await agent.aworkspace()
    agent.gate()
    failure = agent.failures.find(request.cell)
    name = request.agent or DEFAULT_AGENT
    _check_start(magics, name, request.model)
    context = await context_text(agent, failure)
    session_id = agent.choose_session(ws, session=None, new=False)
    error = f"{failure.name}: {failure.value}" if failure.value else failure.name
    line = error if len(error) <= 160 else error[:159] + "…"
    visible = f"{VERBS[kind]} {failure.label}: {line}"
    prompt = instructions(kind).format(label=failure.label, error=line) + "\n\n" + context
    parts = [TextPart(session_id=session_id, message_id="", text=visible),
             TextPart(session_id=session_id, message_id="", text=prompt, synthetic=True)]
    options: dict[str, object] = {"list_variables": False}
    if kind == "explain":
        options["permission"] = explain_rules(ws)
    release = agent.pending.force_review(session_id) if kind == "fix" else None
    latest = agent.pending.latest
    try:
        await agent.prompt("", agent=name, model=request.model, session=session_id, parts=parts, options=options)
    except BaseException:
        magics.forget_if_empty()
        raise
    finally:
        if release is not None:
            release()  # what the run proposed stays pending; later prompts follow `review:` again
    if kind == "fix":
        await wait_for_review(agent, session_id, latest)


def _check_start(magics: Magic, agent: str, model: str | None) -> None:
    """Fail now if the run could not start, with where the model came from (as a prompt's check does)."""
    from ...provider.registry import ModelIdError
    from ..magics import preflight

    host = magics.agent
    ws = host.workspace()
    setting = host.settings.model
    try:
        preflight.check(ws, agent=agent, model=model, setting=setting, session_id=host.session_id)
    except ModelIdError as exc:
        choice = preflight.model_in_use(ws, option=model, setting=setting,
                                        agent=preflight.agent_for(ws, agent, host.session_id))
        raise UsageError(f"{choice.why}: {exc}") from None


async def run_fix(magics: Magic, args: list[str]) -> None:
    await run(magics, args, "fix")


async def run_explain(magics: Magic, args: list[str]) -> None:
    await run(magics, args, "explain")
