"""What the hooks of one event said, as the loop acts on it.

Every kind of hook (a command, a Python plugin) answers in these terms, so the loop reads one shape. Several
hooks matching one event run at the same time; `combine` makes their answers one: the strictest decision wins
(deny, then ask, then allow), any block blocks, and what they add (context for the model, messages and errors
for the person) is kept from each, in the order the hooks are configured.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

Decision = Literal["allow", "deny", "ask"]
STRICTNESS: dict[Decision | None, int] = {None: 0, "allow": 1, "ask": 2, "deny": 3}


@dataclass(frozen=True)
class HookOutcome:
    """One hook's answer, or several hooks' combined.

    Who reads what: `reason`, `additional_context` and a block's reason go to the model (for `PreToolUse` a
    block or deny refuses the call and the reason is what the model reads); `system_messages`, `errors` and
    `stop` go to the person. A hook's `allow` only skips an ask: it never overrides a deny rule.
    """

    decision: Decision | None = None
    """`PreToolUse`'s `permissionDecision` (Claude Code's older `approve`/`block` read as allow/deny)."""
    reason: str | None = None
    """Why: `permissionDecisionReason`, `reason`, or the stderr of a hook that exited 2."""
    blocked: bool = False
    """The hook exited 2, or answered `decision: block`: for `PreToolUse` the call does not run (and
    `decision` is deny); for `Stop` the agent goes on; for `UserPromptSubmit` the prompt is not sent."""
    updated_input: dict[str, Any] | None = None
    """`PreToolUse`'s `updatedInput`: the arguments the call runs with instead."""
    additional_context: list[str] = field(default_factory=list)
    """`additionalContext`, and the plain output of a `UserPromptSubmit`/`SessionStart` hook: for the model."""
    stop: str | None = None
    """`continue: false`: the run ends, and the person reads this (`stopReason`)."""
    system_messages: list[str] = field(default_factory=list)
    """`systemMessage`: shown to the person."""
    errors: list[str] = field(default_factory=list)
    """What went wrong without blocking (another exit code, output that is not JSON, a timeout, a hook not yet
    approved): shown to the person; the call goes on."""

    @property
    def denies(self) -> bool:
        """Whether a tool call must not run: blocked, or denied."""
        return self.blocked or self.decision == "deny"

    @staticmethod
    def combine(outcomes: Iterable[HookOutcome]) -> HookOutcome:
        """The answers of hooks that ran for one event as one, `outcomes` in configuration order."""
        told = list(outcomes)
        if not told:
            return NOTHING
        if len(told) == 1:
            return told[0]
        decision = max((o.decision for o in told), key=STRICTNESS.__getitem__)
        blocked = any(o.blocked for o in told)
        if blocked or decision == "deny":
            deciding = [o for o in told if o.blocked or o.decision == "deny"]
        else:
            deciding = [o for o in told if o.decision == decision]
        reasons = [o.reason for o in deciding if o.reason]
        return HookOutcome(
            decision=decision, reason="\n\n".join(dict.fromkeys(reasons)) or None, blocked=blocked,
            updated_input=next((o.updated_input for o in told if o.updated_input is not None), None),
            additional_context=[text for o in told for text in o.additional_context],
            stop=next((o.stop for o in told if o.stop is not None), None),
            system_messages=[text for o in told for text in o.system_messages],
            errors=[text for o in told for text in o.errors],
        )


NOTHING = HookOutcome()
"""What no hook, or a hook with nothing to say, answers."""
