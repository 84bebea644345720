"""Deny rules hold against the attack corpus, run end to end, with the OS sandbox off and on.

Each case of `corpus.py` is one bash call in a real workspace under `{"*": allow, "bash": {"*": allow,
"rm *": deny, "curl *": deny, "git push*": deny}}` with nobody present to answer an ask. What is asserted is
the effect, looked for outside the sandbox: the victim file is still there, the loopback server saw no
request, the bare remote received no ref, nothing appeared outside the project, the plan agent changed no
file; and the controls, dressed the same way but harmless, still ran. The whole corpus runs once per
sandbox mode (a few seconds); `python -m tests.safety.report` prints the same run as a table.
"""

from __future__ import annotations

from collections import Counter

import pytest

from .corpus import CASES, CATEGORIES, Case
from .harness import MODES, Outcome, run_corpus, run_unchecked, sandbox_skip_reason


@pytest.fixture(scope="module", params=MODES, ids=[f"sandbox-{m}" for m in MODES])
def outcomes(request: pytest.FixtureRequest) -> dict[Case, Outcome]:
    skip = sandbox_skip_reason(request.param)
    if skip is not None:
        pytest.skip(f"sandbox: {request.param}: {skip}")
    return {o.case: o for o in run_corpus(request.param, CASES)}


def _id(case: Case) -> str:
    return f"{case.category}: {case.command[:60]}"


def test_the_corpus_covers_every_category_with_at_least_150_commands():
    counts = Counter(c.category for c in CASES)
    assert len(CASES) >= 150 and set(counts) == set(CATEGORIES)
    assert len(set(CASES)) == len(CASES), "a case is listed twice"


def test_the_attacks_work_when_nothing_checks_them():
    """A case whose effect never happens proves nothing; a few may depend on programs a machine lacks."""
    attacks = [c for c in CASES if c.expect == "blocked"]
    effective = run_unchecked(attacks)
    ineffective = [c.command for c, worked in effective.items() if not worked]
    assert len(ineffective) <= len(attacks) // 20, ineffective


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_the_effect_of_each_command_is_as_the_rules_say(outcomes: dict[Case, Outcome], case: Case):
    outcome = outcomes[case]
    if case.expect == "runs":
        assert outcome.decision == "allowed" and outcome.happened, outcome.detail
    else:
        assert not outcome.happened, f"the {case.effect} effect happened ({outcome.decision}) {outcome.detail}"
        assert outcome.decision in ("denied", "asked"), outcome.detail


def test_with_the_sandbox_on_every_command_that_ran_was_confined(request: pytest.FixtureRequest,
                                                                 outcomes: dict[Case, Outcome]):
    ran = [o for o in outcomes.values() if o.decision == "allowed"]
    mode = request.node.callspec.params["outcomes"]
    assert ran
    assert {o.confinement for o in ran} == ({"bwrap"} if mode == "required" else {"none"})
