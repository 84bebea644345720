"""Errors raised by opencode_nb.

Two readers: a person gets the file, line, key and what to write instead; the model gets what happened
and what to do next. Misuse and run failures are separate families; tool errors become tool results.

OpencodeNbError
├── ConfigError      a file or mapping we read is wrong: names file, line, key and the fix (every
│                    problem of one reading at once)
├── NotFoundError    an id (session, message, permission or question request) does not exist
├── ProviderError    the model API failed; `.retryable` tells the loop whether to try again
└── ToolError        returned to the model as the tool's result, never a crash
    ├── DeniedError      a rule forbids the call; the model reads why and carries on
    ├── PolicyRefusedError  nobody is present to ask and the policy refuses; the model carries on
    ├── CorrectedError   the person said no and why; the model reads the feedback and carries on
    └── RejectedError    the person said no; the loop stops

ConfigWarning (a UserWarning, not an error): a configuration problem that does not stop loading, such as
an unknown key; the loader also keeps it in `LoadedConfig.warnings` for front ends that show it themselves.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any


class OpencodeNbError(Exception):
    """Root of every error opencode_nb raises on purpose."""


class ConfigError(OpencodeNbError):
    """A configuration file or mapping is wrong.

    The message reads `file:line key.path: problem` so a person can jump straight to the fix.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        line: int | None = None,
        key: str | None = None,
        hint: str,
        restricting: bool = False,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.restricting = restricting
        """The mistake is in something that restricts (a rule, a misspelt `permission:`): the configuration read
        before would allow what this file meant to take away, so a front end must not fall back on it."""
        self.line = line
        self.key = key
        self.hint = hint
        where = self.path or "config"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where} {key}: {hint}" if key else f"{where}: {hint}")
        self.problems: list[ConfigError] = [self]
        """Every problem found in one reading of the configuration; just this one unless `combine` made it."""

    @classmethod
    def combine(cls, errors: list[ConfigError]) -> ConfigError:
        """One error for every problem found, so a person fixes them all in one go rather than one per reload.

        The result is the first error itself when there is only one; otherwise its message lists them all,
        one per line, and its `path`, `line`, `key` and `hint` are the first problem's.
        """
        problems = [p for error in errors for p in error.problems]
        if len(problems) == 1:
            return problems[0]
        first = problems[0]
        combined = cls(first.path, line=first.line, key=first.key, hint=first.hint,
                       restricting=any(p.restricting for p in problems))
        combined.problems = problems
        combined.args = (f"{len(problems)} problems in the configuration:\n"
                         + "\n".join(f"  {p}" for p in problems),)
        return combined


class ConfigWarning(UserWarning):
    """A configuration problem that does not stop loading: an unknown key, an unset variable."""


class NotFoundError(OpencodeNbError, KeyError):
    """An id that does not exist (session, message, permission or question request)."""

    def __init__(self, kind: str, ident: str, hint: str | None = None) -> None:
        self.kind = kind
        self.ident = ident
        super().__init__(f"{kind} {ident!r} not found" + (f"; {hint}" if hint else ""))

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


class ProviderError(OpencodeNbError):
    """The model API failed. `retryable` is decided once, where the SDK error is classified."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        retry_after_s: float | None = None,
        kind: str = "provider",
    ) -> None:
        self.retryable = retryable
        self.status = status
        self.retry_after_s = retry_after_s
        self.kind = kind
        """rate_limit, overloaded, server, connection (retryable); auth, quota, bad_request, content_filter,
        context_overflow or provider (not)."""
        from . import secrets  # here, not above: the kernel extension imports this module while it loads

        # Servers echo what they were sent, a key included; the message reaches views, logs and the store.
        super().__init__(secrets.redact(message))


class ToolError(OpencodeNbError):
    """A failure the model reads as the tool's result.

    The message is written for the model: what went wrong and what to do next. `summary`, when given, is the
    same failure for the person, in a few words, and the call's card shows it instead of the message (which
    may tell the model to "call it again" or "carry on"). Without one the card shows the message.
    """

    SUMMARY: str | None = None
    """The summary of every error of the class that is not given its own."""

    def __init__(self, message: str = "", *, summary: str | None = None) -> None:
        super().__init__(message)
        self.summary = summary or self.SUMMARY


class DeniedError(ToolError):
    """A configured rule forbids this call; the relevant rules are shown to the model, and `reason`, when given,
    says why the call met them (a file with other names is judged as outside the project)."""

    SHOWN = 50
    """The most rules the message quotes (the newest, which decide): a ruleset can hold 100,000."""

    def __init__(self, rules: list[Any] | None = None, *, reason: str | None = None,
                 managed: str | None = None) -> None:
        """`managed`: the administrator's file the rules come from, when they are its and not the person's."""
        self.rules = list(rules or [])
        shown = json.dumps([_rule_dict(r) for r in self.rules[-self.SHOWN:]])
        of = f" (the last {self.SHOWN} of {len(self.rules)})" if len(self.rules) > self.SHOWN else ""
        why = f"\n{reason}" if reason else ""
        super().__init__(f"{DENIED}{of} {shown}{why}", summary=self.person_summary(self.rules, managed))

    @staticmethod
    def person_summary(rules: list[Any], managed: str | None = None) -> str:
        """The denying rule as its author wrote it, when only one could have denied the call."""
        whose = "the administrator's managed" if managed else "your permission"
        where = f" ({managed})" if managed else ""
        denies = [r for r in rules if getattr(r, "action", None) == "deny"]
        if len(denies) != 1:
            return f"Denied by {whose} rules{where}"
        return f"Denied by {whose} rule {denies[0].permission} {denies[0].pattern!r}: deny{where}"


class HookBlockedError(OpencodeNbError):
    """A `UserPromptSubmit` hook blocked the prompt: it was not sent, and nothing of it was written."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"A UserPromptSubmit hook blocked this prompt, so it was not sent: {reason}")


class HookRefusedError(ToolError):
    """A hook refused the call (a `PreToolUse` command that exited 2 or answered deny, a plugin's
    `tool.execute.before`): the model reads the hook's reason."""

    def __init__(self, reason: str, *, event: str = "PreToolUse") -> None:
        super().__init__(f"A {event} hook refused this call: {reason}", summary=f"Refused by a {event} hook")


class PolicyRefusedError(ToolError):
    """Nobody is present to ask (a headless run) and its policy refuses: the model reads why and carries on."""

    SUMMARY = "Not run: nobody is present to approve it, and this run's policy refuses what it would ask"


class RejectedError(ToolError):
    """The person refused the call without saying why: the loop stops after this step.

    A refusal nobody typed (a timeout, a closed workspace) carries its own message, which is worded for a
    person too and so is its summary.
    """

    def __init__(self, message: str | None = None, *, summary: str | None = None) -> None:
        super().__init__(message or REJECTED, summary=summary or (message if message else REJECTED_SUMMARY))


class CorrectedError(RejectedError):
    """The person refused the call and said why; the model reads the feedback and carries on."""

    def __init__(self, feedback: str) -> None:
        self.feedback = feedback
        super().__init__(f"{CORRECTED}{feedback}", summary=f"{REJECTED_SUMMARY}: “{feedback}”")


DENIED = "The user has specified a rule which prevents you from using this specific tool call. " \
         "Here are some of the relevant rules"
"""How a denial begins for the model; the rules it quotes follow."""
REJECTED = "The user rejected permission to use this specific tool call."
"""What the model reads when the person refused without a word."""
CORRECTED = "The user rejected permission to use this specific tool call with the following feedback: "
"""What the model reads before the person's feedback."""
REJECTED_SUMMARY = "Rejected by you"
"""What the person reads on the card of a call they refused."""
MODEL_TEMPLATES = (DENIED, REJECTED, CORRECTED.rstrip(": "))
"""Sentences written for the model that no view may show a person."""


def person_summary(message: str) -> str | None:
    """The person's words for an error message written from these templates, for calls stored before their
    errors carried a summary; None for any other message."""
    if message.startswith(CORRECTED):
        return f"{REJECTED_SUMMARY}: “{message[len(CORRECTED):]}”"
    if message.startswith(REJECTED):
        return REJECTED_SUMMARY
    if message.startswith(DENIED):
        managed = MANAGED_DENIAL.search(message)
        if managed is not None:
            path, permission, pattern = managed.groups()
            return f"Denied by the administrator's managed rule {permission} {pattern}: deny ({path})"
        return "Denied by your permission rules"
    return None


MANAGED_DENIAL = re.compile(r"The administrator's managed configuration \((.+?)\) denies (\S+) ('.*?'|\".*?\");")
"""The reason a managed deny gives (permission/service.py), from which its summary is read back."""


def _rule_dict(rule: Any) -> Any:
    dump = getattr(rule, "model_dump", None)
    return dump() if dump else rule
