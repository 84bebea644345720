"""Run the attack corpus and print, per category, what was tried and what the checks decided.

    python -m tests.safety.report            # sandbox off, then required (where bubblewrap works)
    python -m tests.safety.report off        # one mode
    python -m tests.safety.report --failures # also list every case that did not hold
    python -m tests.safety.report --unchecked # first, which attacks work at all when nothing checks them

Per category: tried / denied (a rule) / asked (refused: nobody present) / allowed (ran), and the effects that
happened. For attacks the goal is none; for controls, all of them.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict

from .corpus import CASES, CATEGORIES
from .harness import MODES, Outcome, run_corpus, run_unchecked, sandbox_skip_reason


def table(mode: str, outcomes: list[Outcome], seconds: float) -> str:
    rows = defaultdict(lambda: {"tried": 0, "denied": 0, "asked": 0, "allowed": 0, "error": 0, "effects": 0})
    for outcome in outcomes:
        row = rows[outcome.case.category]
        row["tried"] += 1
        row[outcome.decision] += 1
        row["effects"] += outcome.happened
    width = max(len(c) for c in CATEGORIES)
    lines = [f"sandbox: {mode}    {len(outcomes)} commands in {seconds:.1f} s",
             f"{'category':<{width}}  tried  denied  asked  allowed  error  effects"]
    total: dict[str, int] = defaultdict(int)
    for category in CATEGORIES:
        if category not in rows:
            continue
        row = rows[category]
        for key, value in row.items():
            total[key] += value
        lines.append(f"{category:<{width}}  {row['tried']:>5}  {row['denied']:>6}  {row['asked']:>5}  "
                     f"{row['allowed']:>7}  {row['error']:>5}  {row['effects']:>7}")
    lines.append(f"{'total':<{width}}  {total['tried']:>5}  {total['denied']:>6}  {total['asked']:>5}  "
                 f"{total['allowed']:>7}  {total['error']:>5}  {total['effects']:>7}")
    ran = [o.confinement or "?" for o in outcomes if o.decision == "allowed"]
    lines.append(f"commands that ran: {len(ran)}, confined as: "
                 + (", ".join(f"{label} ×{ran.count(label)}" for label in sorted(set(ran))) or "-"))
    lines.append("(effects: for attacks the harm that happened, goal 0; for controls the work done, goal all)")
    return "\n".join(lines)


def failures(outcomes: list[Outcome]) -> str:
    bad = [o for o in outcomes if not o.ok]
    if not bad:
        return "every case held"
    return "\n".join(f"  [{o.case.category}] {o.case.command!r}: {o.decision}, effect "
                     f"{'happened' if o.happened else 'absent'} {o.detail[:200]!r}" for o in bad)


def main(argv: list[str]) -> int:
    modes = [a for a in argv if a in MODES] or list(MODES)
    show_failures = "--failures" in argv
    status = 0
    if "--unchecked" in argv:
        attacks = [c for c in CASES if c.expect == "blocked"]
        effective = run_unchecked(attacks)
        print(f"unchecked (plain bash -c): {sum(effective.values())} of {len(attacks)} attacks have their effect")
        for case, worked in effective.items():
            if not worked:
                print(f"  no effect even unchecked: [{case.category}] {case.command!r}")
        print()
    for mode in modes:
        skip = sandbox_skip_reason(mode)
        if skip is not None:
            print(f"sandbox: {mode}    skipped: {skip}\n")
            continue
        started = time.perf_counter()
        outcomes = run_corpus(mode, CASES)
        print(table(mode, outcomes, time.perf_counter() - started))
        if show_failures or any(not o.ok for o in outcomes):
            print(failures(outcomes))
        status |= any(not o.ok for o in outcomes)
        print()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
