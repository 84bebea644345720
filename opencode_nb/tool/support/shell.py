"""Parsing shell lines into what the permission engine checks.

Every simple command in a line is checked on its own: those in pipelines, `&&`/`||`/`;` lists, subshells,
`$(...)`, backticks, process substitutions, loops and conditionals, so `ls && rm -rf x` cannot ride on an
allowance for `ls`. Commands run through a wrapper (`sudo`, `env`, `time`, `nohup`, `xargs`, `timeout`,
`find -exec`, `bash -c '...'`) are checked as written and once more unwrapped. The parse uses tree-sitter's
bash grammar, not regular expressions. A line that does not parse cleanly, or that runs text only known when
it runs (`eval "$CMD"`), is flagged: the caller then asks a person whatever the rules say.

A command's pattern is the command as written, with its leading `VAR=value` assignments and its redirections
(`FOO=1 npm test`, `echo hi > out.txt`), whitespace between words made single: a person approving it sees
what will run, and a rule may name a redirection. Where that text differs from the command's bare words, the
words are a second pattern (`npm test`, `echo hi`), so a rule about the command (`rm *: deny`) still holds
however it is dressed: the caller checks every pattern, and a deny on any one refuses the line.
For "always" a person approves a prefix of the words rather than one exact line: `git checkout main` offers
`git checkout *`. How many words make that prefix is the command's arity.
`cd` and its kin are not checked (they change nothing by themselves), but where they lead is: paths named by
file commands and redirections are resolved, following `cd`s, so the caller can ask before leaving the
workspace.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .arity import always_prefix

CWD_COMMANDS = frozenset({"cd", "chdir", "pushd", "popd"})
"""Not checked as commands; they only move where the following commands' paths resolve."""

FILE_COMMANDS = frozenset({
    "cd", "chdir", "pushd", "rm", "rmdir", "unlink", "cp", "mv", "ln", "mkdir", "touch", "chmod", "chown",
    "chgrp", "cat", "ls", "head", "tail", "less", "more", "tee", "find", "du", "stat", "file", "truncate",
    "shred", "rsync", "tar", "zip", "unzip", "gzip", "gunzip", "wc", "diff", "sort", "source", ".",
})
"""Commands whose arguments are paths: one outside the workspace asks `external_directory` too."""

HARMLESS_PATHS = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero",
                            "/dev/random", "/dev/urandom"})

WRAPPER_OPTIONS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D", "-R", "-T"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "setsid": frozenset(),
    "xargs": frozenset({"-I", "-i", "-n", "-P", "-d", "-L", "-l", "-s", "-E", "-e", "-a", "--max-args",
                        "--max-procs", "--delimiter", "--arg-file", "--replace", "--max-lines"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
}
"""Commands that run the command after their own options; the value-taking options are listed."""

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
"""`<shell> -c 'text'` runs `text`: it is parsed and checked like the line itself."""

_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_SKIPPED = _REDIRECTS | {"variable_assignment", "comment"}
"""Parts of a command that are not its words."""
_LITERAL = frozenset({"word", "number", "command_name"})
_SPACED = frozenset({"command", "file_redirect", "herestring_redirect", "heredoc_redirect"})
"""Nodes whose pattern text is rebuilt from their parts, one space wherever the line had any whitespace."""
_HEREDOC_HEAD = frozenset({"<<", "<<-", "heredoc_start", "file_redirect", "herestring_redirect"})
"""What of a here-document belongs to its command's pattern: the operator, the marker and any redirection
on that line. The document's body is data, and commands written after the marker are commands of their own."""
_LEADS_TO_COMMAND = frozenset({"list", "pipeline", "negated_command"})
"""Statements whose redirections bind to their last command: `a && b > f`, `a | b > f`, `! b > f`."""


@dataclass
class SimpleCommand:
    """One command as the shell will run it."""

    words: list[str]
    """Its words as written (quotes kept)."""
    values: list[str | None]
    """The same words unquoted; None where the value is only known when the line runs (`$x`, `$(...)`)."""

    text: str | None = None
    """The command as written with its assignments and redirections, when it has any."""

    @property
    def name(self) -> str:
        return os.path.basename(self.values[0] or self.words[0])


@dataclass
class ParsedCommand:
    patterns: list[str] = field(default_factory=list)
    """What the `bash` permission is checked against, in order, no repeats: each simple command as written, and
    its bare words too when assignments or redirections make the two differ."""
    always: list[str] = field(default_factory=list)
    """The prefixes an "always" reply grants (`git checkout *`)."""
    commands: list[SimpleCommand] = field(default_factory=list)
    """Every simple command, `cd`s included, in the order the shell meets them."""
    redirects: list[tuple[int, str | None]] = field(default_factory=list)
    """Redirection targets, each with the number of commands met before it (to know which `cd`s apply)."""
    parsed: bool = True
    """False when the line cannot be trusted to mean what its patterns say: ask a person regardless."""
    reason: str | None = None


@cache
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def parse_command(command: str) -> ParsedCommand:
    result = ParsedCommand()
    _parse_into(command, result, depth=0)
    if not result.parsed:
        whole = command.strip()
        result.patterns = [whole, *(p for p in result.patterns if p != whole)]
        result.always = []
    return result


def command_patterns(command: str) -> tuple[list[str], list[str]]:
    """The patterns a shell line is checked against, and the "always" prefixes.

    Each simple command gives its text as written (`FOO=1 rm x > log`) and, when that differs, its bare words
    (`rm x`); a deny on any pattern refuses the line.

    A line that does not parse gives the whole line as its only certain pattern (followed by whatever could
    be recognised in it) and no "always" prefixes.
    """
    parsed = parse_command(command)
    return parsed.patterns, parsed.always


def _parse_into(command: str, result: ParsedCommand, depth: int) -> None:
    source = command.encode()
    tree = _parser().parse(source)
    if tree.root_node.has_error:
        _distrust(result, "the command could not be parsed")
    redirected: dict[int, Any] = {}  # command node id → the statement whose redirections apply to it
    stack = [tree.root_node]
    while stack:  # pre-order: commands in the order they appear, outer ones before those nested inside
        node = stack.pop()
        if node.type == "command":
            _command(node, source, result, depth, redirected.get(node.id))
        elif node.type == "file_redirect":
            _redirect(node, source, result)
        elif node.type == "redirected_statement" and (bound := _redirected_command(node)) is not None:
            redirected[bound.id] = node
        stack.extend(reversed(node.children))


def _redirected_command(statement: Any) -> Any | None:
    """The simple command a statement's redirections apply to: in `a && b > f` and `a | b > f` that is `b`."""
    body = statement.child_by_field_name("body")
    while body is not None and body.type in _LEADS_TO_COMMAND and body.named_children:
        body = body.named_children[-1]
    return body if body is not None and body.type == "command" else None


def _command(node: Any, source: bytes, result: ParsedCommand, depth: int, statement: Any | None) -> None:
    redirects = [c for c in statement.children if c.type in _REDIRECTS] if statement is not None else []
    words: list[str] = []
    values: list[str | None] = []
    for child in [*node.children, *redirects]:
        if child.type == "file_redirect":
            # `rm > log -rf x` is `rm -rf x > log`: words after a redirection's target are the command's.
            for word in _redirect_targets(child)[1:]:
                words.append(_text(source, word))
                values.append(_value(word, source))
        if child.type in _SKIPPED:
            continue
        words.append(_text(source, child))
        values.append(_value(child, source))
    if not words:
        return
    text = _spaced(node, source)
    end = node.end_byte
    for redirect in redirects:
        text += (" " if redirect.start_byte > end else "") + _spaced(redirect, source)
        end = redirect.end_byte
    _add(SimpleCommand(words, values, text if text != " ".join(words) else None), result, depth)


def _spaced(node: Any, source: bytes) -> str:
    """The node's text with each run of whitespace between its parts, line continuations included, made one space."""
    if node.type not in _SPACED:
        return _text(source, node)
    parts = [c for c in node.children if node.type != "heredoc_redirect" or c.type in _HEREDOC_HEAD]
    out = ""
    end = None
    for child in parts:
        if end is not None and child.start_byte > end:
            out += " "
        out += _spaced(child, source)
        end = child.end_byte
    return out


def _redirect_targets(node: Any) -> list[Any]:
    return [c for c in node.children if c.is_named and c.type != "file_descriptor"]


def _redirect(node: Any, source: bytes, result: ParsedCommand) -> None:
    operator = next((c for c in node.children if not c.is_named), None)
    duplicates = operator is not None and "&" in _text(source, operator)
    # Words after the target (`> log -rf x`) are the command's arguments, but an argument may name a file too.
    for child in _redirect_targets(node):
        value = _value(child, source)
        if duplicates and (value is None or value.isdigit() or value == "-"):
            continue  # `2>&1`, `>&2`, `>&-`: a file descriptor, not a file
        result.redirects.append((len(result.commands), value))


def _add(cmd: SimpleCommand, result: ParsedCommand, depth: int) -> None:
    while True:
        result.commands.append(cmd)
        if cmd.name not in CWD_COMMANDS:
            for pattern in (cmd.text, " ".join(cmd.words)):
                if pattern is not None and pattern not in result.patterns:
                    result.patterns.append(pattern)
            prefix = always_prefix(cmd.words, cmd.values)
            if prefix not in result.always:
                result.always.append(prefix)
        for inner in _shell_texts(cmd):
            if inner is None:
                _distrust(result, f"`{cmd.name}` runs text that is only known when the line runs")
            elif depth < 3:
                _parse_into(inner, result, depth + 1)
        for words, values in _exec_commands(cmd):
            _add(SimpleCommand(words, values), result, depth)
        unwrapped = _unwrap(cmd)
        if unwrapped is None:
            return
        cmd = unwrapped


def _distrust(result: ParsedCommand, reason: str) -> None:
    if result.parsed:
        result.parsed = False
        result.reason = reason


def _unwrap(cmd: SimpleCommand) -> SimpleCommand | None:
    """The command a wrapper runs: `sudo -u x cmd`, `env A=1 cmd`, `timeout 5 cmd`, `xargs -n1 cmd`."""
    options = WRAPPER_OPTIONS.get(cmd.name)
    if options is None:
        return None
    i = 1
    seen_duration = False
    while i < len(cmd.words):
        value = cmd.values[i] or cmd.words[i]
        if value in options:
            i += 2
        elif value == "--":
            i += 1
            break
        elif (value.startswith("-") and value != "-") or (cmd.name == "env" and "=" in value):
            i += 1
        elif cmd.name == "timeout" and not seen_duration:
            seen_duration = True
            i += 1
        else:
            break
    if i >= len(cmd.words) or (cmd.name == "command" and {"-v", "-V"} & set(cmd.words[1:i])):
        return None
    return SimpleCommand(cmd.words[i:], cmd.values[i:])


def _shell_texts(cmd: SimpleCommand) -> list[str | None]:
    """What `bash -c 'text'` and `eval text` would run (None: not known before it runs)."""
    if cmd.name == "eval":
        if len(cmd.values) < 2:
            return []
        parts = cmd.values[1:]
        return [None] if any(v is None for v in parts) else [" ".join(v for v in parts if v is not None)]
    if cmd.name in SHELLS:
        for i, value in enumerate(cmd.values[1:-1], 1):
            if value is not None and value.startswith("-") and "c" in value.lstrip("-") and not value.startswith("--"):
                return [cmd.values[i + 1]]
    return []


def _exec_commands(cmd: SimpleCommand) -> list[tuple[list[str], list[str | None]]]:
    """The commands `find ... -exec cmd args ;` runs, one per `-exec`/`-execdir`/`-ok`/`-okdir`."""
    if cmd.name != "find":
        return []
    found = []
    i = 1
    while i < len(cmd.words):
        if cmd.values[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(cmd.words) and cmd.values[j] not in (";", "+", "\\;"):
                j += 1
            if j > i + 1:
                found.append((cmd.words[i + 1:j], cmd.values[i + 1:j]))
            i = j
        i += 1
    return found


def outside_paths(parsed: ParsedCommand, cwd: Path, root: Path) -> list[Path]:
    """Paths named by file commands (and redirections) that resolve outside `root`, following `cd`s."""
    found: list[Path] = []
    home = Path(os.path.expanduser("~"))
    redirects = sorted(parsed.redirects, key=lambda r: r[0])
    r = 0
    here = cwd

    def check(value: str | None, base: Path) -> None:
        path = _literal_path(value, base)
        if (path is not None and str(path) not in HARMLESS_PATHS and path != root and root not in path.parents
                and path not in found):
            found.append(path)

    for index, cmd in enumerate(parsed.commands):
        while r < len(redirects) and redirects[r][0] <= index:
            check(redirects[r][1], here)
            r += 1
        if cmd.name in FILE_COMMANDS:
            for value in cmd.values[1:]:
                if value is None or value.startswith("-") or (cmd.name == "chmod" and value.startswith("+")):
                    continue
                check(value, here)
        if cmd.name in ("cd", "chdir", "pushd"):
            targets = [v for v in cmd.values[1:] if v is None or not v.startswith("-")]
            if not targets:
                here = home
            elif (moved := _literal_path(targets[0], here)) is not None:
                here = moved
    for _, value in redirects[r:]:
        check(value, here)
    return found


def _literal_path(value: str | None, base: Path) -> Path | None:
    """Where an argument points, up to its first wildcard; None when it is not a fixed path."""
    if value is None or value == "":
        return None
    cut = min((value.find(c) for c in "?*[" if c in value), default=-1)
    if cut == 0:
        return None
    if cut > 0:
        value = value[:cut]
        value = value if value.endswith("/") else os.path.dirname(value) or "."
    path = Path(os.path.expanduser(value))
    path = path if path.is_absolute() else base / path
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.normpath(path))


def _text(source: bytes, node: Any) -> str:
    return source[node.start_byte:node.end_byte].decode(errors="replace")


def _value(node: Any, source: bytes) -> str | None:
    """The word's value after quote removal, or None when it depends on expansions."""
    kind = node.type
    if kind == "command_name" and node.named_children:
        return _value(node.named_children[0], source)
    if kind in _LITERAL:
        text = _text(source, node)
        return _unescape(text) if kind != "number" else text
    if kind == "raw_string":
        return _text(source, node)[1:-1]
    if kind == "ansi_c_string":
        return None
    if kind == "string":
        parts = []
        for child in node.children:
            if child.type == '"':
                continue
            if child.type != "string_content":
                return None
            parts.append(_text(source, child))
        return "".join(parts)
    if kind == "concatenation":
        pieces = [_value(child, source) for child in node.children]
        return None if any(p is None for p in pieces) else "".join(p for p in pieces if p is not None)
    return None


def _unescape(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)
