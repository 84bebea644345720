"""Parsing shell lines into what the permission engine checks.

Every simple command in a line is checked on its own: those in pipelines, `&&`/`||`/`;` lists, subshells,
`$(...)`, backticks, process substitutions, loops, conditionals and function bodies, so `ls && rm -rf x`
cannot ride on an allowance for `ls`. The parse uses tree-sitter's bash grammar, not regular expressions.

Rules are matched against what will run, not how it is spelled. A command gives up to four patterns: as
written with its assignments and redirections (`FOO=1 rm x > log`: a person approving it sees what will run,
and a rule may name a redirection), its bare words (`rm x`), the words as the shell will pass them, with the
program by name (`"/bin/rm" 'x'` → `rm x`, `git -C . push` → `git push`), and, for a symbolic link, the
program it points to. A deny on any pattern refuses the line. Commands that run other commands (`sudo`,
`env -S`, `xargs`, `find -exec`, `bash -c`, `trap`, ...; see `unwrap.py`) add the inner command's patterns.

Nothing runs unchecked. Statements with no command word (`x=1`, `declare`, `(( ))`, `[[ ]]`, a lone
redirection) are patterns of their own. What a rule cannot see is recorded with its reason, in two kinds:
- `unknown`: which program runs cannot be known before the line runs: a command word from an expansion
  (`$cmd`, `$(...)`, `${x:-rm}`), a glob (`/bin/r?`), a subcommand from one (`git $sub`), a changed `PATH`,
  `hash -p`, aliases. A person is asked whatever the rules allow.
- `hidden`: a known program runs code no rule can see: an interpreter given code (`python -c`, `sh < x`,
  `source`), arithmetic on values that may hide a command (`(( y ))`), a git alias (`hidden.py`, `git.py`,
  `arithmetic.py`). The caller asks a person unless a rule naming the program allows it.
A line that does not parse cleanly is flagged too (`parsed`): a person is asked whatever the rules say.

For "always" a person approves a prefix of the words rather than one exact line: `git checkout main` offers
`git checkout *`. How many words make that prefix is the command's arity. `cd` and its kin are not checked
(they change nothing by themselves), but where they lead is: see `shell_paths.py`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from .arithmetic import expansion_hides_code, hides_code, test_hides_code
from .arity import always_prefix, arity
from .command_word import linked_program, program
from .git import GitCall, git
from .hidden import INTERPRETERS, hidden_code, piped, program_files, renames_programs, variable_reason
from .identity import identify
from .parsed import ParsedCommand, Redirect, SimpleCommand
from .unwrap import OTHER_SHELLS, SHELLS, Inner, assignments_of, unwrap
from .variables import Variables, collect
from .words import Word, literal, text_of, words

CWD_COMMANDS = frozenset({"cd", "chdir", "pushd", "popd"})
"""Not checked as commands; they only move where the following commands' paths resolve."""

MAX_DEPTH = 4
"""How deep shell text inside shell text (`bash -c "sh -c '...'"`) is followed before a person is asked."""

_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_SKIPPED = _REDIRECTS | {"variable_assignment", "comment"}
"""Parts of a command that are not its words."""
_SPACED = frozenset({"command", "file_redirect", "herestring_redirect", "heredoc_redirect"})
"""Nodes whose pattern text is rebuilt from their parts, one space wherever the line had any whitespace."""
_HEREDOC_HEAD = frozenset({"<<", "<<-", "heredoc_start", "file_redirect", "herestring_redirect"})
"""What of a here-document belongs to its command's pattern: the operator, the marker and any redirection
on that line. The document's body is data, and commands written after the marker are commands of their own."""
_LEADS_TO_COMMAND = frozenset({"list", "pipeline", "negated_command"})
"""Statements whose redirections bind to their last command: `a && b > f`, `a | b > f`, `! b > f`."""
_WRITES = frozenset({"&>", "&>>", "<>"})
"""Besides every operator starting with `>`, the redirections that write their file."""
_STATEMENT_PARENTS = frozenset({"program", "list", "pipeline", "compound_statement", "subshell", "do_group",
                                "if_statement", "elif_clause", "else_clause", "case_item", "negated_command",
                                "redirected_statement", "function_definition"})
"""Where an assignment is a statement of its own rather than a command's prefix."""
_FIXED_ARITY = INTERPRETERS.keys() | SHELLS | OTHER_SHELLS
"""Commands whose second word is a script, not a subcommand: an unknown one is just an unknown file."""

PROBE = "\x00"
"""Stands in for a program name no rule can mean, to tell a catch-all allowance from one naming the program."""


@cache
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def parse_command(command: str, cwd: Path | None = None, root: Path | None = None) -> ParsedCommand:
    """Everything the rules need to know about a line; `cwd`, the folder it starts in, lets command words that
    are paths to symbolic links be followed to the program they run; `root` is the project's (`cwd` by default),
    whose copies of programs are not installed ones."""
    result = ParsedCommand()
    _Line(result, depth=0, cwd=cwd, root=root).parse(command)
    if not result.parsed:
        whole = command.strip()
        result.patterns = [whole, *(p for p in result.patterns if p != whole)]
        result.always = []
    return result


def command_patterns(command: str) -> tuple[list[str], list[str]]:
    """The patterns a shell line is checked against, and the "always" prefixes.

    Each simple command gives its text as written (`FOO=1 rm x > log`), its bare words (`rm x`) and the
    words as they will run (`"/bin/rm" x` → `rm x`); commands it runs (`sudo rm x`, `bash -c 'rm x'`) and
    statements with no command word (`x=1`, `(( y ))`) give theirs. A deny on any pattern refuses the line.

    A line that does not parse gives the whole line as its first pattern (followed by whatever could be
    recognised in it) and no "always" prefixes.
    """
    parsed = parse_command(command)
    return parsed.patterns, parsed.always


class _Line:
    """One pass over one piece of shell text (the line, or text it hands to a shell)."""

    def __init__(self, result: ParsedCommand, depth: int, cwd: Path | None, root: Path | None = None) -> None:
        self.result = result
        self.depth = depth
        self.cwd = cwd
        self.root = root
        self.source = b""
        self.variables = Variables()

    def parse(self, command: str) -> None:
        source = self.source = command.encode()
        tree = _parser().parse(source)
        if tree.root_node.has_error:
            self._distrust("the command could not be parsed")
        self.variables = collect(tree.root_node, source)
        redirected: dict[int, Any] = {}  # command node id → the statement whose redirections apply to it
        stack = [tree.root_node]
        while stack:  # pre-order: commands in the order they appear, outer ones before those nested inside
            node = stack.pop()
            self._visit(node, redirected)
            self._joined(node)
            stack.extend(reversed(node.children))

    def _joined(self, node: Any) -> None:
        """bash joins a word cut by a backslash-newline (`r`, backslash, newline, `m`) into one, `rm`; the
        grammar makes two of it. Such a line is not what its patterns say."""
        for before, after in itertools.pairwise(node.children):
            gap = self.source[before.end_byte:after.start_byte]
            if gap and _CONTINUATIONS.fullmatch(gap):
                self._distrust("a line continuation joins two words into one, which the parser splits")
                return

    def _visit(self, node: Any, redirected: dict[int, Any]) -> None:
        kind = node.type
        if kind == "command":
            self._command(node, redirected.get(node.id))
        elif kind in ("declaration_command", "unset_command"):
            self._declaration(node)
        elif kind == "test_command":
            self._statement(node, "the test compares values as arithmetic, which can run commands hidden in them"
                            if test_hides_code(node, self.source, self.variables) else None)
        elif kind in ("variable_assignment", "variable_assignments") and node.parent is not None and \
                node.parent.type in _STATEMENT_PARENTS:
            self._assignments(node)
        elif kind == "compound_statement" and node.children and node.children[0].type == "((":
            self._statement(node, _ARITHMETIC if hides_code(node, self.source, self.variables) else None)
        elif kind == "c_style_for_statement":
            header = [node.child_by_field_name(f) for f in ("initializer", "condition", "update")]
            hides = any(h is not None and hides_code(h, self.source, self.variables) for h in header)
            end = next((c.end_byte for c in node.children if c.type == "))"), node.end_byte)
            pattern = " ".join(self.source[node.start_byte:end].decode(errors="replace").split())
            self.result.add_pattern(pattern)
            if hides:
                self.result.add_hidden(pattern, "for", _ARITHMETIC)
        elif kind == "arithmetic_expansion":
            if hides_code(node, self.source, self.variables):
                pattern = text_of(self.source, node)
                self.result.add_hidden(pattern, pattern[:3], _ARITHMETIC)
        elif kind == "expansion":
            if expansion_hides_code(node, self.source, self.variables):
                pattern = text_of(self.source, node)
                self.result.add_hidden(pattern, "${", "the expansion evaluates a variable's value (as a "
                                       "subscript, offset, name or prompt), which can run commands hidden in it")
        elif kind == "file_redirect":
            self._redirect(node)
        elif kind == "redirected_statement":
            bound = _redirected_command(node)
            if bound is not None:
                redirected[bound.id] = node
            elif node.child_by_field_name("body") is None:
                self._statement(node, None)

    # ---------------------------------------------------------------------------------------- statements

    def _statement(self, node: Any, hidden_reason: str | None) -> None:
        """A statement with no command word: checked whole, as written."""
        pattern = " ".join(text_of(self.source, node).split())
        self.result.add_pattern(pattern)
        if hidden_reason is not None:
            self.result.add_hidden(pattern, pattern.split(" ", 1)[0], hidden_reason)

    def _assignments(self, node: Any) -> None:
        self._statement(node, None)
        pattern = " ".join(text_of(self.source, node).split())
        targets = [node] if node.type == "variable_assignment" else node.named_children
        for assignment in targets:
            self._assigned(assignment, pattern)

    def _assigned(self, assignment: Any, pattern: str) -> None:
        target = assignment.child_by_field_name("name")
        if target is None:
            return
        if target.type == "subscript":
            index = target.child_by_field_name("index")
            if index is not None and hides_code(index, self.source, self.variables):
                self.result.add_hidden(pattern, pattern.split(" ", 1)[0], "an array subscript is evaluated as "
                                       "arithmetic, which can run commands hidden in a variable's value")
            target = target.child_by_field_name("name") or target
        self._variable(text_of(self.source, target), pattern)

    def _variable(self, name: str, pattern: str) -> None:
        found = variable_reason(name)
        if found is None:
            return
        kind, reason = found
        if kind == "unknown":
            self.result.add_unknown(reason)
        else:
            self.result.add_hidden(pattern, pattern.split(" ", 1)[0], reason)

    def _declaration(self, node: Any) -> None:
        """`declare`, `export`, `local`, `unset`...: the grammar's own nodes, checked like commands."""
        argv: list[Word] = []
        for child in node.children:
            if child.type == "variable_assignment":
                argv.append(self._assignment_word(child))
                continue
            if child.type in _SKIPPED:
                continue
            argv.extend(words(child, self.source) if child.is_named else [literal(text_of(self.source, child))])
        pattern = " ".join(text_of(self.source, node).split())
        self.result.add_pattern(pattern)
        name = argv[0].value if argv else None
        if name is None:
            return
        normalised = " ".join(w.shown for w in argv)
        self.result.add_pattern(normalised)
        for reason in hidden_code(name, argv):
            self.result.add_hidden(normalised, name, reason)
        for child in node.children:
            if child.type == "variable_assignment":
                self._assigned(child, normalised)
        self.result.commands.append(SimpleCommand(argv, self.variables))

    def _assignment_word(self, node: Any) -> Word:
        """`x=$v` as the word `declare` receives: `x=` and the value, when the value is known."""
        text = text_of(self.source, node)
        value = node.child_by_field_name("value")
        if value is None:
            return Word(text, text)
        parts = words(value, self.source)
        known = parts[0].value if len(parts) == 1 else None
        return Word(text, None if known is None else text[:value.start_byte - node.start_byte] + known)

    # ---------------------------------------------------------------------------------------- commands

    def _command(self, node: Any, statement: Any | None) -> None:
        redirects = [c for c in statement.children if c.type in _REDIRECTS] if statement is not None else []
        argv: list[Word] = []
        written: list[str] = []
        prefix: list[str] = []
        writes: list[Word] = []
        for child in [*node.children, *redirects]:
            if child.type == "file_redirect":
                # `rm > log -rf x` is `rm -rf x > log`: words after a redirection's target are the command's.
                for target in _redirect_targets(child)[1:]:
                    written.append(text_of(self.source, target))
                    argv.extend(words(target, self.source))
                target, writing = _redirect_target(child, self.source)
                if writing and target is not None:
                    writes.append(target)
            if child.type == "variable_assignment":
                name = child.child_by_field_name("name")
                if name is not None:
                    prefix.append(text_of(self.source, name))
            if child.type in _SKIPPED:
                continue
            written.append(text_of(self.source, child))
            argv.extend(words(child, self.source))
        if not argv:
            return
        text = _spaced(node, self.source)
        end = node.end_byte
        for redirect in redirects:
            text += (" " if redirect.start_byte > end else "") + _spaced(redirect, self.source)
            end = redirect.end_byte
        bare = " ".join(written)
        if program(argv[0]) not in CWD_COMMANDS:
            self.result.add_pattern(text)
        self.result.commands.append(SimpleCommand(argv, self.variables))
        name = self._simple(argv, bare, prefix=prefix, written_text=text)
        if name is not None and name not in CWD_COMMANDS:
            for target in writes:  # one spelling for every redirection that writes a file: `cmd > file`
                if target.value not in (None, "/dev/null"):
                    self.result.add_pattern(f"{_normalised(name, argv)} > {target.shown}")

    def _simple(self, argv: list[Word], bare: str | None, *, prefix: Sequence[str] = (),
                written_text: str | None = None) -> str | None:
        """Check one command given as words (written, or handed over by a wrapper); returns its program."""
        name = program(argv[0])
        if name is None:
            self.result.add_pattern(bare)
            self.result.add_pattern(" ".join(w.shown for w in argv))
            self.result.add_unknown(
                f"the command word `{argv[0].text}` is only known when the line runs" if not argv[0].glob else
                f"the command word `{argv[0].text}` is a pattern the shell matches against file names when the "
                "line runs")
            return None
        for variable in prefix:
            self._variable(variable, written_text or name)
        call = git(argv) if name == "git" else None
        normalised = self._as_run(name, argv, bare, call)
        self._hidden(name, argv, normalised)
        self._inner(name, normalised, call if call is not None else unwrap(name, argv))
        if name in ("env", "sudo", "doas"):
            for variable, _ in assignments_of(argv):
                self._variable(variable, normalised)
        found = identify(argv[0].value, self.cwd, self.root)
        for installed in found.installed_as:  # a copy or link of a program, run by another name, is that program
            self._simple([Word(argv[0].text, installed), *argv[1:]], None)
        if found.unknown is not None:
            self.result.add_hidden(normalised, name, found.unknown)
        return name

    def _as_run(self, name: str, argv: list[Word], bare: str | None, call: GitCall | None) -> str:
        """Add the command's patterns (bare, as it runs, through a link) and "always" prefix; returns the
        pattern as it runs (`rm x` for `"/bin/rm" x`, `git push` for `git -C . push`)."""
        words_run = [literal(name), *(call.words[1:] if call is not None and call.words else argv[1:])]
        normalised = " ".join(w.shown for w in words_run)
        if name in CWD_COMMANDS:
            return normalised
        result = self.result
        result.add_pattern(bare)
        result.add_pattern(normalised)
        linked = linked_program(argv[0].value or "", self.cwd)
        if linked is not None:
            result.add_pattern(" ".join([linked, *(w.shown for w in argv[1:])]))
        result.add_always(always_prefix([w.shown for w in words_run]))
        size = arity([w.shown for w in words_run])
        if call is None and name not in _FIXED_ARITY and any((w.value is None or w.glob) and not w.text.startswith("-")
                                                             for w in words_run[1:size]):
            result.add_unknown(f"`{name}`'s subcommand is only known when the line runs")
        return normalised

    def _hidden(self, name: str, argv: list[Word], normalised: str) -> None:
        """Code the command runs that no rule can see: given inline, piped in, or made by the line itself."""
        result = self.result
        for reason in hidden_code(name, argv):
            result.add_hidden(normalised, name, reason)
        files = program_files(name, argv)
        if any(piped(f) for f in files):
            result.add_hidden(normalised, name, f"`{name}` runs code piped to it, which no rule can check")
        for made in self._not_there_yet(argv[0], [f for f in files if not piped(f)]):
            result.add_hidden(normalised, name, f"`{made}` does not exist yet: the line makes the program it runs")
        renamed = renames_programs(name, argv)
        if renamed is not None:
            result.add_unknown(renamed)

    def _inner(self, name: str, normalised: str, inner: Inner) -> None:
        """What a wrapper, a shell or git runs besides itself: checked like the line itself."""
        result = self.result
        for reason in inner.hidden:
            result.add_hidden(normalised, name, reason)
        for reason in inner.unknown:
            result.add_unknown(reason)
        for script in inner.scripts:
            if script.value is None:
                result.add_hidden(normalised, name, f"`{name}` runs shell text only known when the line runs")
            elif self.depth >= MAX_DEPTH:
                result.add_unknown("shell text is nested too deeply to follow")
            else:
                _Line(result, self.depth + 1, self.cwd, self.root).parse(script.value)
        for command in inner.commands:
            self._simple(command, None)

    def _not_there_yet(self, command_word: Word, files: list[Word]) -> list[str]:
        """Programs and scripts named by path that are not files when the line is checked: the line makes them
        (`cp /bin/rm x && ./x`, `printf ... > s.sh && bash s.sh`), or the word was not the script after all
        (an option value the program reads differently), and no rule can see into either."""
        if self.cwd is None:
            return []
        named = [command_word.value] if command_word.value and "/" in command_word.value else []
        named += [f.value for f in files if f.value]
        return [v for v in named if not v.startswith("~") and not (self.cwd / v).is_file()]

    def _redirect(self, node: Any) -> None:
        target, writing = _redirect_target(node, self.source)
        if target is not None:
            self.result.redirects.append(Redirect(len(self.result.commands), target, writing, self.variables))
        # Words after the target (`> log -rf x`) are the command's arguments, but an argument may name a file.
        for extra in _redirect_targets(node)[1:]:
            for word in words(extra, self.source):
                self.result.redirects.append(Redirect(len(self.result.commands), word, False, self.variables))

    def _distrust(self, reason: str) -> None:
        if self.result.parsed:
            self.result.parsed = False
            self.result.reason = reason


_CONTINUATIONS = re.compile(rb"(?:\\\r?\n)+")
_ARITHMETIC = "arithmetic evaluates variable values, which can run commands hidden in them"


def _normalised(name: str, argv: list[Word]) -> str:
    return " ".join([name, *(w.shown for w in argv[1:])])


def _redirected_command(statement: Any) -> Any | None:
    """The simple command a statement's redirections apply to: in `a && b > f` and `a | b > f` that is `b`."""
    body = statement.child_by_field_name("body")
    while body is not None and body.type in _LEADS_TO_COMMAND and body.named_children:
        body = body.named_children[-1]
    return body if body is not None and body.type == "command" else None


def _redirect_targets(node: Any) -> list[Any]:
    return [c for c in node.children if c.is_named and c.type != "file_descriptor"]


def _redirect_target(node: Any, source: bytes) -> tuple[Word | None, bool]:
    """The file a redirection opens, and whether it writes it; None for a file descriptor (`2>&1`, `>&-`)."""
    if node.type != "file_redirect":
        return None, False
    operator = next((c for c in node.children if not c.is_named), None)
    op = text_of(source, operator) if operator is not None else ""
    targets = _redirect_targets(node)
    if not targets:
        return None, False
    target = words(targets[0], source)[0]
    if "&" in op and op not in ("&>", "&>>") and (target.value is None or target.value.isdigit() or
                                                  target.value == "-"):
        return None, False
    return target, op in _WRITES or op.startswith(">")


def _spaced(node: Any, source: bytes) -> str:
    """The node's text with each run of whitespace between its parts, line continuations included, made one space."""
    if node.type not in _SPACED:
        return text_of(source, node)
    parts = [c for c in node.children if node.type != "heredoc_redirect" or c.type in _HEREDOC_HEAD]
    out = ""
    end = None
    for child in parts:
        if end is not None and child.start_byte > end:
            out += " "
        out += _spaced(child, source)
        end = child.end_byte
    return out
