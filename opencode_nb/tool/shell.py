"""Parsing shell commands into what the permission engine checks.

Every simple command in a line (pipelines, `&&`/`||`/`;` lists, subshells, `$(...)` and backticks,
redirections) is checked on its own, so `ls && rm -rf x` cannot ride on an allowance for `ls`. The
parse uses tree-sitter's bash grammar, not regular expressions. A command that does not parse cleanly
is flagged so the caller asks a person whatever the rules say.

For "always" a person approves a prefix, not one exact line: `git checkout main` offers `git checkout *`.
How many words make that prefix is the command's arity, from the table below.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

ARITY: dict[str, int] = {
    "git": 2, "git remote": 3, "git stash": 3, "npm": 2, "npm run": 3, "npm exec": 3, "npx": 2, "pnpm": 2,
    "pnpm run": 3, "yarn": 2, "yarn run": 3, "bun": 2, "bun run": 3, "pip": 2, "pip3": 2, "uv": 2, "uv pip": 3,
    "uv run": 3, "poetry": 2, "poetry run": 3, "conda": 2, "conda env": 3, "mamba": 2, "python -m": 3,
    "python3 -m": 3, "docker": 2, "docker compose": 3, "kubectl": 2, "helm": 2, "cargo": 2, "go": 2, "make": 2,
    "jupyter": 2, "jupyter nbconvert": 2, "gh": 3, "brew": 2, "apt": 2, "apt-get": 2, "terraform": 2,
    "dvc": 2, "mlflow": 2, "dbt": 2, "aws": 3, "gcloud": 3, "az": 3,
}
"""Words that make up a command's identity: `npm run build` is one thing, `npm run test` another."""

WRAPPERS = {"sudo", "env", "time", "nohup", "xargs", "command", "exec", "nice", "timeout", "doas"}
"""Prefixes that run another command: the inner command is checked too."""

FILE_COMMANDS = {"cd", "rm", "rmdir", "cp", "mv", "mkdir", "touch", "chmod", "chown", "ln", "cat", "ls", "head",
                 "tail", "less", "more", "tee", "find", "du", "stat", "truncate", "shred"}
"""Commands whose arguments are paths: a path outside the workspace asks `external_directory` too."""


@dataclass
class ParsedCommand:
    patterns: list[str] = field(default_factory=list)
    always: list[str] = field(default_factory=list)
    words: list[list[str]] = field(default_factory=list)
    """The words of each simple command (unquoted where simple), for path checks."""
    parsed: bool = True


@cache
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def parse_command(command: str) -> ParsedCommand:
    source = command.encode()
    tree = _parser().parse(source)
    result = ParsedCommand(parsed=not tree.root_node.has_error)
    stack = [tree.root_node]
    nodes = []
    while stack:  # pre-order, so outer commands come before the ones nested in them
        node = stack.pop()
        if node.type == "command":
            nodes.append(node)
        stack.extend(reversed(node.children))
    for node in nodes:
        words = [_text(source, c) for c in node.children
                 if c.type not in ("variable_assignment", "file_redirect", "herestring_redirect", "comment")]
        if words:
            _add(result, words)
    if not result.patterns:
        result.patterns.append(command.strip())
    return result


def command_patterns(command: str) -> tuple[list[str], list[str]]:
    """The patterns a shell line is checked against, one per simple command, and the "always" prefixes."""
    parsed = parse_command(command)
    return parsed.patterns, parsed.always


def _add(result: ParsedCommand, words: list[str]) -> None:
    while words:
        pattern = " ".join(words)
        if pattern not in result.patterns:
            result.patterns.append(pattern)
            result.words.append([_unquote(w) for w in words])
        prefix = always_prefix(words)
        if prefix not in result.always:
            result.always.append(prefix)
        inner = _unwrap(words)
        if inner is None:
            return
        words = inner


def always_prefix(words: list[str]) -> str:
    for size in (3, 2):
        key = " ".join(words[:size])
        if len(words) >= size and key in ARITY:
            return " ".join(words[: ARITY[key]]) + " *"
    return " ".join(words[: ARITY.get(words[0], 1)]) + " *"


def _unwrap(words: list[str]) -> list[str] | None:
    """The command a wrapper runs (`sudo -u x cmd`, `env A=1 cmd`, `timeout 5 cmd`), if any."""
    head = os.path.basename(words[0])
    if head not in WRAPPERS:
        return None
    rest = words[1:]
    takes_value = {"sudo": {"-u", "-g", "-C", "-h"}, "nice": {"-n"}, "xargs": {"-I", "-n", "-P", "-d"},
                   "env": {"-u", "-C"}}.get(head, set())
    while rest:
        word = rest[0]
        if word in takes_value and len(rest) > 1:
            rest = rest[2:]
        elif word.startswith("-") or (head == "env" and "=" in word) or (head == "timeout" and word[:1].isdigit()):
            rest = rest[1:]
        else:
            break
    return rest or None


def outside_paths(parsed: ParsedCommand, cwd: Path, root: Path) -> list[Path]:
    """Paths named as arguments of file commands that resolve outside `root`."""
    found: list[Path] = []
    for words in parsed.words:
        if os.path.basename(words[0]) not in FILE_COMMANDS:
            continue
        for arg in words[1:]:
            if arg.startswith("-") or "$" in arg or ("*" in arg and "/" not in arg):
                continue
            path = Path(os.path.expanduser(arg))
            path = (path if path.is_absolute() else cwd / path).resolve()
            if path != root and root not in path.parents and path not in found:
                found.append(path)
    return found


def _text(source: bytes, node: Any) -> str:
    return source[node.start_byte:node.end_byte].decode(errors="replace")


def _unquote(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word
