"""`%agent accept|reject [N|all]` and `%agent pending`: the person's decisions on the cell changes agents proposed.

The words after the subcommand are read here (the grammar only checks their shape): a number or `all`, and
`--anyway` (accept over a later edit of the cell) or `--no-run` (accept without running the cell). With no
number, the one pending change is meant; with several, the person must say which, so nothing is accepted by
a guess.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from . import listing

if TYPE_CHECKING:
    from ..notebook.pending import PendingChanges
    from ..runner import NotebookAgent


def chosen(pending: PendingChanges, verb: str, words: list[str]) -> int | None:
    """The change `words` name (None: every pending one).

    Raises:
        UsageError: no number was given while several changes are pending, or the number is no pending change.
    """
    target = next((w for w in words if not w.startswith("-")), None)
    waiting = [c.n for c in pending.pending()]
    if target == "all":
        return None
    if target is None:
        if len(waiting) > 1:
            numbers = ", ".join(str(n) for n in waiting)
            raise UsageError(f"%agent {verb}: {len(waiting)} changes are pending ({numbers}); say which, e.g. "
                             f"%agent {verb} {waiting[0]}, or %agent {verb} all")
        return waiting[0] if waiting else None
    n = int(target)
    try:
        pending.find(n)
    except LookupError as exc:
        raise UsageError(f"%agent {verb} {n}: {exc.args[0]}") from None
    return n


def decide(agent: NotebookAgent, verb: str, words: list[str]) -> Awaitable[dict[str, str]]:
    """Accept or reject what `words` name; the awaitable says what each decision did.

    Raises:
        UsageError: at once (the cell fails), when `words` name no pending change or several could be meant.
    """
    agent.workspace()  # a configuration that cannot be read fails the cell now, as for any subcommand
    n = chosen(agent.pending, verb, words)
    return _decided(agent.pending, n, verb == "accept", rerun="--no-run" not in words, force="--anyway" in words)


async def _decided(pending: PendingChanges, n: int | None, accept: bool, *, rerun: bool,
                   force: bool) -> dict[str, str]:
    if n is None and not pending.pending():
        return listing.text("No change is pending: nothing to decide.")
    try:
        decisions = await pending.decide(n, accept, rerun=rerun, force=force)
    except LookupError as exc:  # decided from the page meanwhile
        return listing.text(str(exc.args[0]))
    return listing.text("\n".join(d.said for d in decisions) or "No change is pending: nothing to decide.")


def listed(agent: NotebookAgent) -> dict[str, str]:
    """`%agent pending`: each pending change with its diff and how to decide it."""
    waiting = agent.pending.pending()
    if not waiting:
        return listing.text("No change is pending.")
    blocks = []
    for change in waiting:
        head = f"Change {change.n}: {change.action} {change.where} (proposed by {change.agent or 'an agent'})"
        blocks.append(f"{head}\n{change.diff.rstrip()}\n%agent accept {change.n}   %agent reject {change.n}")
    if len(waiting) > 1:
        blocks.append("%agent accept all   %agent reject all")
    return listing.text("\n\n".join(blocks))
