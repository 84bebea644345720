"""Where a shell line's paths lead: anything outside the project asks `external_directory` first.

Any program may take a path, so every argument is looked at, not only those of a list of file commands:
operands, `--option=value` values, redirection targets and `cd` targets, each resolved against the
directory the shell will be in at that point (following `cd`, `pushd`), symbolic links included. What is
plainly not a path is left alone: URLs, option names, the text of `echo` and `printf`, the pattern `grep`,
`sed` and `awk` take first.

A path built from something only known when the line runs (`$HOME/x`, `~`, `$(pwd)/..`, `cd $dir`) cannot be
resolved: it is reported as unknown and asks too, by the text written. A variable the line itself sets to
literal values (`d=../x; touch $d`) is resolved with those values.
"""

from __future__ import annotations

import glob
import itertools
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...secrets.files import is_secret_file
from .parse import CWD_COMMANDS
from .parsed import ParsedCommand, Redirect, SimpleCommand
from .variables import Variables
from .words import Word

HARMLESS_PATHS = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero",
                            "/dev/random", "/dev/urandom", "/dev/full"})

NOT_PATHS = frozenset({"echo", "printf", "tr", "expr", "seq", "sleep", "true", "false", "kill", "exit",
                       "return", ":", "date", "shift", "wait", "alias", "type", "hash", "jobs", "umask",
                       "ulimit", "break", "continue", "set", "shopt", "trap", "exec", "eval", "command",
                       "builtin", "let", "declare", "typeset", "local", "export", "readonly", "unset"})
"""Commands whose arguments are text, never files (what they run is checked on its own)."""

PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "gsed", "awk", "gawk", "mawk",
                           "nawk", "jq", "yq"})
"""Commands whose first operand is a pattern or a program, not a file."""

TEXT_OPTIONS = frozenset({"-m", "--message", "--grep", "--author", "--committer", "--format", "--pretty",
                          "--date", "-e", "--regexp", "--expression", "--since", "--until", "-F"})
"""Options whose value is text (a message, a pattern, a format)."""

MAX_CANDIDATES = 16
"""A word built from variables with more possible values than this is treated as unknown."""
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_SETTING = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.+)", re.S)

Check = Callable[[Word, Variables, "Path | None", bool], None]


READERS = frozenset({"cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ls", "stat", "file",
                     "wc", "diff", "cmp", "md5sum", "sha1sum", "sha256sum", "od", "xxd", "hexdump", "strings",
                     "find", "du", "tree", "git", "readlink", "realpath", "basename", "dirname", "test", "[", "jq"})
"""Commands that only read the files they are given (git writes its own files through git's own rules)."""


NAME_ONLY = frozenset({"ls", "stat", "test", "[", "realpath", "readlink", "basename", "dirname", "du", "touch", "rm"})
"""Commands that act on a file's name or metadata and never show its content: naming `.env` to them is no read."""
MAX_EXPANDED = 1000
"""Names a wildcard is expanded to, at most, when looking for secret files among them."""


@dataclass
class PathCheck:
    outside: list[Path] = field(default_factory=list)
    """Paths that resolve outside the project, in the order met."""
    unknown: list[str] = field(default_factory=list)
    """Words that may be paths but are only known when the line runs, as written."""
    git_internals: list[str] = field(default_factory=list)
    """Files under a `.git` folder (or the hooks folder) the line may write, relative to the project: a hook or
    a config key written there makes git run code later."""
    linked: list[Path] = field(default_factory=list)
    secret_files: list[str] = field(default_factory=list)
    """Files that conventionally hold secrets (`.env`, `id_rsa`) the line may read, named as an argument, a
    redirection source or a wildcard the shell expands to them; relative inside the project, else absolute."""
    """Files in the project a redirection writes that have other names (hard links), which may be outside."""


def check_paths(parsed: ParsedCommand, cwd: Path, root: Path,
                git_dir: Callable[[Path, Path], bool] | None = None) -> PathCheck:
    """Paths the line names outside `root`, those it builds from what only the run will know, and, given
    `git_dir(path, root)`, the files of git's own it may write."""
    found = PathCheck()
    redirects = sorted(parsed.redirects, key=lambda r: r.before)
    r = 0
    here: Path | None = cwd

    def check(word: Word, variables: Variables, base: Path | None, always_a_path: bool = False,
              writes: bool = False, redirected: bool = False, reads: bool = True) -> None:
        for value in _candidates(word, variables, always_a_path):
            if value is None:
                if word.text not in found.unknown:
                    found.unknown.append(word.text)
                continue
            if reads and not _harmless(value):
                _secret_files(value, word.glob, base, root, found.secret_files)
            if _harmless(value):
                continue
            path = _literal_path(value, base)
            if path is None or str(path) in HARMLESS_PATHS:
                continue
            if path != root and root not in path.parents:
                if path not in found.outside:
                    found.outside.append(path)
            elif writes and git_dir is not None and git_dir(path, root):
                relative = path.relative_to(root).as_posix()
                if relative not in found.git_internals:
                    found.git_internals.append(relative)
            if redirected and path not in found.outside and path not in found.linked and _hard_linked(path):
                found.linked.append(path)

    def redirect(entry: Redirect) -> None:
        if entry.target.kind != "process_substitution":
            check(entry.target, entry.variables, here, always_a_path=True, writes=entry.writes,
                  redirected=entry.writes, reads=not entry.writes)

    for index, command in enumerate(parsed.commands):
        while r < len(redirects) and redirects[r].before <= index:
            redirect(redirects[r])
            r += 1
        name = command.name
        if name in CWD_COMMANDS:
            here = _cd(command, here, check)
            continue
        if name in NOT_PATHS:
            continue
        for word in _path_arguments(name, command.words):
            check(word, command.variables, here, writes=name not in READERS, reads=name not in NAME_ONLY)
    for entry in redirects[r:]:
        redirect(entry)
    return found


def outside_paths(parsed: ParsedCommand, cwd: Path, root: Path) -> list[Path]:
    """Paths the line names that resolve outside `root`, following `cd`s."""
    return check_paths(parsed, cwd, root).outside


def _cd(command: SimpleCommand, here: Path | None, check: Check) -> Path | None:
    """Where the shell is after a `cd` (None: somewhere only the run will know, itself asked about)."""
    targets = [w for w in command.words[1:] if w.value is None or not w.value.startswith("-") or w.value == "-"]
    target = targets[0] if targets else Word("~", None)  # a bare `cd` goes home
    plain = (target.value or "").startswith(("/", "."))
    if command.name == "popd" or target.value == "-" or (os.environ.get("CDPATH") and not plain):
        target = Word(target.text, None)
    check(target, command.variables, here, True)
    values = _candidates(target, command.variables, True)
    if len(values) != 1 or values[0] is None:
        return None
    if here is None and not values[0].startswith("/"):
        return None
    return _literal_path(values[0], here)


def _path_arguments(name: str, words: list[Word]) -> list[Word]:
    out = []
    skip_next = False
    pattern_pending = name in PATTERN_FIRST
    for word in words[1:]:
        if skip_next:
            skip_next = False
            continue
        value = word.value
        if value is None and word.text.startswith("-"):
            if word.text.startswith("--") and (after := _option_value(word)) is not None:
                out.append(after)  # `--output=$HOME/x`
            continue  # other options with an expansion in them (`-j$(nproc)`)
        if value is not None and value.startswith("-") and value != "-":
            option, eq, attached = value.partition("=")
            if option in TEXT_OPTIONS:
                skip_next = not eq
                if option in ("-e", "--regexp", "--expression", "-f", "--file"):
                    pattern_pending = False
                continue
            if eq and attached and value.startswith("--"):
                out.append(Word(attached, attached))
            continue
        if pattern_pending:
            pattern_pending = False
            continue
        out.append(word)
        if value is not None and (m := _SETTING.fullmatch(value)) and re.match(r"[./~]|.*/", m.group(2)):
            out.append(Word(m.group(2), m.group(2), tilde=m.group(2).startswith("~")))  # `dd of=../x`
    return out


def _hard_linked(path: Path) -> bool:
    try:
        info = path.stat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink > 1


def _secret_files(value: str, wildcard: bool, base: Path | None, root: Path, into: list[str]) -> None:
    """Add the files holding secrets `value` names: itself, or what the shell expands it to. The expansion is
    made here as the shell will make it (a leading `*` skips dot files in both), on the files there now."""
    if base is None and not value.startswith("/"):
        return
    names = [value]
    if wildcard and any(c in value for c in "*?["):
        names = list(itertools.islice(glob.iglob(value, root_dir=None if value.startswith("/") else base),
                                      MAX_EXPANDED))
    for name in names:
        path = Path(name) if name.startswith("/") else (base or root) / name
        try:
            path = path.resolve()
        except (OSError, RuntimeError):
            path = Path(os.path.normpath(path))
        shown = path.relative_to(root).as_posix() if path.is_relative_to(root) and path != root else path.as_posix()
        if is_secret_file(shown) and shown not in into:
            into.append(shown)


def _harmless(value: str) -> bool:
    """The terminal, the null device and the line's own file descriptors (`/dev/stdin` resolves to a pipe)."""
    return os.path.normpath(value) in HARMLESS_PATHS or value.startswith(("/dev/fd/", "/proc/self/fd/"))


def _option_value(word: Word) -> Word | None:
    """The value of `--name=value` when the value holds an expansion."""
    if word.pieces is None:
        return Word(word.text.partition("=")[2], None) if "=" in word.text else None
    first = word.pieces[0]
    if first[0] != "text" or "=" not in first[1]:
        return None
    rest = first[1].partition("=")[2]
    return Word(word.text.partition("=")[2], None, pieces=((("text", rest, first[2]),) if rest else ()) +
                tuple(word.pieces[1:]))


def _candidates(word: Word, variables: Variables, always_a_path: bool) -> list[str | None]:
    """The values a word may have when it runs; None stands for one that cannot be known here."""
    if word.value is not None:
        value = word.value
        if not value:
            return []
        if word.tilde:
            return [None]
        url = _URL.match(value)
        if url is not None:
            return [re.sub(r"^file://[^/]*", "", value)] if value.lower().startswith("file://") else []
        return [value]
    if word.kind == "process_substitution":
        return []
    if word.pieces is None:
        return [None] if always_a_path or _maybe_path(word) else []
    options: list[list[str]] = []
    for kind, text, quoted in word.pieces:
        if kind == "text":
            options.append([text])
            continue
        values = variables.values(text)
        if values is None or (not quoted and any(re.search(r"\s", v) for v in values)):
            return [None] if always_a_path or _may_name_a_path(word, variables) else []
        options.append(values or [""])
    combos = list(itertools.islice(itertools.product(*options), MAX_CANDIDATES + 1))
    if len(combos) > MAX_CANDIDATES:
        return [None]
    return ["".join(c) for c in combos]


def _maybe_path(word: Word) -> bool:
    """An expansion we cannot follow: a path unless it is only positional parameters (`"$@"`, `$1`)."""
    return not re.fullmatch(r'"?\$(?:[@*#?$!0-9-]|\{[@*#?0-9]\})"?', word.text)


def _may_name_a_path(word: Word, variables: Variables) -> bool:
    """A word of plain variables that cannot be resolved may still plainly not be a path: a bare `$n` whose
    environment value has no `/` and that the line does not set."""
    assert word.pieces is not None
    for kind, text, _ in word.pieces:
        if kind == "text" and ("/" in text or text.startswith("~")):
            return True
        if kind == "var" and (text in variables.sites or "/" in variables.env.get(text, "") or variables.anything):
            return True
    return False


def _literal_path(value: str, base: Path | None) -> Path | None:
    """Where an argument points, up to its first wildcard; None when it is not a fixed path."""
    if not value:
        return None
    cut = min((value.find(c) for c in "?*[" if c in value), default=-1)
    if cut == 0:
        return None
    if cut > 0:
        value = value[:cut]
        value = value if value.endswith("/") else os.path.dirname(value) or "."
    path = Path(value)
    if not path.is_absolute():
        if base is None:
            return None
        path = base / path
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.normpath(path))
