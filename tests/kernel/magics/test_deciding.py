"""`%agent accept|reject [N|all]`: which change a line means, and a malformed one is refused, never a prompt."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from opencode_nb.kernel.magics.deciding import chosen
from opencode_nb.kernel.magics.subcommands import split_line
from opencode_nb.kernel.notebook.journal import Journal
from opencode_nb.kernel.notebook.pending import PendingChange, PendingChanges
from opencode_nb.kernel.presence import Presence


def pending_with(*states: str) -> PendingChanges:
    pending = PendingChanges(notebook=lambda: None, journal=Journal(), presence=Presence(terminal=True),
                             config=lambda: None)
    for n, state in enumerate(states, 1):
        pending.changes.append(PendingChange(n=n, action="replace", cell_id=f"c{n}", anchor=None, cell_type="code",
                                             old_source="", old_type="code", new_source="x", session_id="s",
                                             turn=None, state=state))  # type: ignore[arg-type]
    return pending


@pytest.mark.parametrize(("line", "parsed"), [
    ("accept", ("accept", [])), ("accept 2", ("accept", ["2"])), ("reject all", ("reject", ["all"])),
    ("accept 3 --anyway --no-run", ("accept", ["3", "--anyway", "--no-run"])),
    ("accept the cells you proposed", (None, [])),
])
def test_lines_that_fit_are_decisions_and_prose_is_a_prompt(line, parsed):
    assert split_line(line) == parsed


@pytest.mark.parametrize("line", ["accept 0", "reject 1 2", "reject 2 --anyway", "accept 2 --force"])
def test_a_number_that_does_not_fit_is_refused_with_the_usage(line):
    with pytest.raises(UsageError, match=r"takes one change number .* or all"):
        split_line(line)


def test_no_number_means_the_one_pending_change_and_several_must_be_named():
    assert chosen(pending_with("rejected", "pending"), "accept", []) == 2
    with pytest.raises(UsageError, match=r"^%agent reject: 2 changes are pending \(1, 3\); say which, e\.g\. "
                                         r"%agent reject 1, or %agent reject all$"):
        chosen(pending_with("pending", "accepted", "pending"), "reject", [])
    assert chosen(pending_with("pending", "pending"), "accept", ["all"]) is None


def test_a_number_that_is_no_pending_change_says_which_are():
    with pytest.raises(UsageError, match=r"^%agent accept 1: Change 1 was accepted already\. Pending: 2\.$"):
        chosen(pending_with("accepted", "pending"), "accept", ["1"])
    with pytest.raises(UsageError, match=r"^%agent accept 9: There is no change 9\. No change is pending\.$"):
        chosen(pending_with(), "accept", ["9"])
