"""The built-in agents and the rules every agent starts from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from ..secrets.files import secret_file_rules
from .info import Mode

READ_ONLY_SHELL: dict[str, str] = {
    "*": "ask",
    "ls": "allow", "ls *": "allow", "pwd": "allow", "cat *": "allow", "head *": "allow", "tail *": "allow",
    "wc *": "allow", "grep *": "allow", "rg *": "allow", "which *": "allow", "tree *": "allow",
    "find *": "allow", "find *-delete*": "ask", "find *-exec*": "ask", "find *-fprint*": "ask",
    "find *-fls*": "ask", "find *-ok*": "ask", "tree -o *": "ask", "tree * -o *": "ask", "rg *--pre*": "ask",
    "git status *": "allow", "git diff *": "allow", "git log *": "allow", "git show *": "allow",
    "git diff *--output*": "ask", "git log *--output*": "ask", "git show *--output*": "ask",
    "git branch": "allow", "git branch -v": "allow", "git branch -a": "allow",
    "* > *": "ask",
}
"""What the plan agent may run without asking: commands that only read. Order matters (last match wins):
the forms that write or run something (`find -delete`/`-exec`/`-fprint`/`-fls`, `git log --output`, `rg
--pre`, any redirection into a file, which the bash tool also spells `cmd > file`) come after the allowances
so they still ask."""

PLAN_FILES = ".opencode/plans/*.md"

NOTEBOOK_RULES: dict[str, Any] = {"edit": "ask", "bash": READ_ONLY_SHELL}
"""What a notebook adds to OpenCode's defaults, under every configuration file: file edits ask, and so does
every shell command but those that only read (the plan agent's list). The quickstart's approvals are then what
a person's own notebook does too, as Claude Code asks before edits and commands. A config's `permission:`
(global or project) comes later and wins, so `permission: {edit: allow, bash: allow}` gives OpenCode's
behaviour back. The Python API and the CLI keep OpenCode's defaults: the conformance vectors are OpenCode's."""

NOTEBOOK_ORIGIN = "notebook default"
"""How `%agent permissions` names a rule of `NOTEBOOK_RULES`."""

NOTEBOOK_ASKS = {"edit": "file edits", "bash": "shell commands"}
"""What each permission of `NOTEBOOK_RULES` is, in a person's words."""


def notebook_notice(in_force: Sequence[str]) -> str | None:
    """The one line a kernel's first `%agent` cell says while notebook defaults decide `in_force` (permissions
    of `NOTEBOOK_RULES`), with the config line that turns them off; None when the configuration decides all."""
    if not in_force:
        return None
    what = " and ".join(NOTEBOOK_ASKS[name] for name in in_force)
    readonly = ", except read-only commands (ls, cat, grep, git status…)" if "bash" in in_force else ""
    line = ", ".join(f"{name}: allow" for name in in_force)
    return (f"Notebook defaults: {what} ask first{readonly}; `permission: {{{line}}}` in opencode.yaml "
            "turns this off.")


def default_rules(data_dir: Path, tmp_dir: Path) -> dict[str, Any]:
    """Everything allowed except what needs a person's eye: loops, outside paths, mode switches, secrets, and
    code run in the person's live namespace (python's `live` pattern; its `sandbox` cannot change anything)
    or notebook cells changed or run (the notebook is the person's document; reading it changes nothing)."""
    return {
        "*": "allow",
        "doom_loop": "ask",
        "external_directory": {
            "*": "ask",
            f"{data_dir}/tool-output/*": "allow",
            f"{tmp_dir}/opencode_nb/*": "allow",
        },
        "question": "deny",
        "plan_enter": "deny",
        "plan_exit": "deny",
        "read": secret_file_rules(),  # `.env`, keys, `.netrc`... ask; see secrets/files.py
        "python": {"live": "ask", "sandbox": "allow"},
        "notebook_read": "allow",
        "notebook_edit": "ask",
        "notebook_run": "ask",
        # A write under .git (a hook, core.fsmonitor in .git/config) runs code at the next git command, so
        # write and edit ask this on top of `edit`. Rules match by permission name, last match wins: an
        # `edit: allow` from the config names `edit` only and never reaches it, nor does a global `"*"` rule
        # (permission.NAMED_ONLY): only a rule naming it (`git_internals: {".git/info/exclude": allow}`).
        "git_internals": "ask",
        "agent_config": "ask",  # config, .opencode/, AGENTS.md, git hooks: named rules only (sandbox/protected.py)
        "network": "deny",  # sandboxed shell commands get a network only from rules naming it (sandbox/policy.py)
    }


@dataclass(frozen=True)
class Builtin:
    mode: Mode
    description: str
    rules: dict[str, Any] = field(default_factory=dict)
    hidden: bool = False
    temperature: float | None = None
    fixed: dict[str, Any] = field(default_factory=dict)
    """Rules that make the agent what it is, checked after every config rule, so no configuration loosens
    them: data-explorer never runs code in the person's namespace, nor changes or runs their cells."""
    notebook: dict[str, Any] = field(default_factory=dict)
    """In a notebook, rules checked after the agent's own and before any config rule: where its own rules
    allow more than `NOTEBOOK_RULES` would (explore's `bash: allow`), the notebook still asks as it does for
    build; a config rule still has the last word."""


def builtins(data_dir: Path, tmp_dir: Path) -> dict[str, Builtin]:
    """In definition order; the first visible primary is the fallback default."""
    whitelist = {"*": "ask", f"{data_dir}/tool-output/*": "allow", f"{tmp_dir}/opencode_nb/*": "allow"}
    return {
        "build": Builtin(
            "primary",
            "The default agent: reads, edits and runs code and notebooks within its permissions.",
            {"question": "allow", "plan_enter": "allow"},
        ),
        "plan": Builtin(
            "primary",
            "Plans without changing anything: read-only research, then a written plan to approve.",
            {
                "question": "allow",
                "plan_exit": "allow",
                "task": {"general": "deny"},
                "edit": {"*": "deny", PLAN_FILES: "allow"},
                "bash": READ_ONLY_SHELL,
                "python": {"live": "deny", "sandbox": "allow"},
                "notebook_edit": "deny",
                "notebook_run": "deny",
            },
        ),
        "general": Builtin(
            "subagent",
            "General-purpose agent for researching complex questions and carrying out multi-step tasks "
            "on its own; use it to run several units of work in parallel.",
            {"todowrite": "deny", "todoread": "deny"},
        ),
        "explore": Builtin(
            "subagent",
            "Fast read-only agent for exploring a codebase or notebook project: finds files by pattern, "
            "searches code for keywords, and answers questions about how things fit together. Say how "
            "thorough to be: quick, medium or very thorough.",
            {
                "*": "deny",
                **{tool: "allow" for tool in ("read", "grep", "glob", "list", "bash", "webfetch", "variables",
                                               "notebook_read")},
                "read": secret_file_rules(),
                "external_directory": whitelist,
            },
            notebook={"bash": READ_ONLY_SHELL},
        ),
        "data-explorer": Builtin(
            "subagent",
            "Read-only agent for the live data in the notebook kernel: inspects dataframes, arrays and other "
            "variables (shape, dtypes, missing values, distributions) without changing them.",
            {
                "*": "deny",
                **{tool: "allow" for tool in ("read", "glob", "grep", "list", "variables", "notebook_read")},
                "read": secret_file_rules(),
                "python": {"*": "deny", "sandbox": "allow"},
                "external_directory": whitelist,
            },
            fixed={"python": {"live": "deny"}, "notebook_edit": "deny", "notebook_run": "deny"},
        ),
        "compaction": Builtin("primary", "Writes the summary that replaces a long history.", {"*": "deny"},
                              hidden=True),
        "title": Builtin("primary", "Names sessions.", {"*": "deny"}, hidden=True, temperature=0.5),
        "summary": Builtin("primary", "Summarizes what a session changed.", {"*": "deny"}, hidden=True),
    }


@cache
def prompt_text(name: str) -> str:
    return files(__package__).joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8").strip()
