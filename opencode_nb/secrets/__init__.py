"""Secrets: which environment variables tools never see, and which values nobody is shown.

What counts as a secret:

- a variable whose name says so: `*_API_KEY`, `*_TOKEN`, `*SECRET*`, `*PASSWORD*`, in any case;
- a variable the configuration names (`secrets.env`: names, or patterns with `*`);
- a variable holding a known secret value (the one a provider's `{env:NAME}` reference read);
- as values: those variables' values (in the workspace's environment and the process's) and every
  configured provider key (`provider.<id>.api_key`), when at least `MIN_LENGTH` characters long; a
  shorter value would turn up in ordinary text too often to be told apart.

What happens to them: `child_env` builds the environment of every process a tool starts (bash, command
templates, the python worker) without those variables, so `env` there shows none of them. `Redactor`
replaces a known value, in whatever case, with `[redacted: NAME]`: as it is, JSON-escaped, URL-encoded and
inside base64 at any alignment, and in the forms code that can read the key (a sandboxed cell reads the
kernel's memory) would use to slip it past a plain search: reversed, rot13, hex (bare, with `\\x`, or with
any one character between bytes) and spelled out with any one character between its own. A run's writes
(session/runlog.py), every row the store writes and every `ProviderError` message go through it. A piece
of a value at least half its length, where a preview or a tail cut it, is hidden too: less than half
leaves too much to guess. Streamed text (`Stream`) holds back its end while that end could still be the
start of a value, so a key split across two deltas is never shown or stored in halves. Both cover the
forms ordinary code writes; a disguised form is hidden only whole, which is what a probe returns.

Why this is process-wide state, unlike everything else in the package: the environment tools inherit is
the process's, shared by every workspace in a kernel, and the places that must apply the rules (the shell
runner, the worker spawn, a provider raising an error) have no workspace at hand. Each workspace
registers what its configuration makes secret (`register`); closing or collecting it takes that back.
Every check uses the union: a value one workspace knows is hidden everywhere in the process, because
hiding too much is the safe way to be wrong.

Files that conventionally hold secrets (`.env`, `id_rsa`, `.netrc`, ...) are the other source of values:
`files.py` says which names they have and the `read` rules every tool asks by; `file_values.py` reads their
values, from the project's (a `SecretFiles` a workspace registers, checked again at every `refresh`) and from
any such file a tool was allowed to read (`learn_file`). A value a variable also holds keeps the variable's
name in its label.

The package: this module holds the names and the registry; `redactor.py` the search every write goes through;
`forms.py` the forms a value takes in text; `files.py` and `file_values.py` the secret files.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from .file_values import SecretFiles, read_values, values_in
from .files import SECRET_FILES, is_secret_file, secret_file_rules
from .redactor import MIN_LENGTH, Redactor, Stream, label

__all__ = ["ENV_REFERENCE", "MIN_LENGTH", "SECRET_FILES", "Redactor", "SecretFiles", "SecretSet", "Stream", "active",
           "child_env", "is_secret_file", "label", "learn_file", "looks_secret", "redact", "refresh", "register",
           "secret_file_rules", "secret_set", "values_in"]

_SECRET_NAME = re.compile(r"(?:_API_KEY|_TOKEN)$|SECRET|PASSWORD", re.IGNORECASE)
ENV_REFERENCE = re.compile(r"^\{env:([A-Za-z_][A-Za-z0-9_]*)\}$")
"""A whole value that names a variable (`{env:NAME}`): the variable's value, never the text, is the secret."""


def looks_secret(name: str) -> bool:
    """Whether a variable's name says it holds a secret (`*_API_KEY`, `*_TOKEN`, `*SECRET*`, `*PASSWORD*`)."""
    return _SECRET_NAME.search(name) is not None


class SecretSet:
    """What one workspace's configuration and environment make secret."""

    def __init__(self, hidden: Iterable[str] = (), values: Mapping[str, str] | None = None) -> None:
        self.hidden = tuple(dict.fromkeys(hidden))
        """Names, or `*` patterns, of variables tools never see (besides those whose names say so)."""
        self.values = dict(values or {})
        """Known secret values, each with the name its redaction shows."""


def secret_set(
    env: Mapping[str, str], *, names: Iterable[str] = (), keys: Mapping[str, str] | None = None
) -> SecretSet:
    """The secrets of a workspace.

    Args:
        env: the workspace's environment; the process's own is read by `register` and `child_env`.
        names: `secrets.env` from the configuration, names or `*` patterns.
        keys: configured API keys by config key (`provider.anthropic.api_key`), as loaded (`{env:NAME}`
            already filled in) or as written in Python (`{env:NAME}` looked up here).
    """
    hidden = list(names)
    values: dict[str, str] = {}
    for key, written in (keys or {}).items():
        reference = ENV_REFERENCE.match(written)
        if reference is not None:
            hidden.append(reference.group(1))
            written = env.get(reference.group(1), "")
        if len(written) >= MIN_LENGTH:
            values.setdefault(written, key)
    # A variable holding a configured key is the one its `{env:NAME}` named: hide it and name the value by it.
    for name, value in env.items():
        if value in values:
            hidden.append(name)
            values[value] = name
    for name, value in env.items():
        if len(value) >= MIN_LENGTH and (looks_secret(name) or _named(name, hidden)):
            values.setdefault(value, name)
    return SecretSet(hidden, values)


def _named(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


# ---------------------------------------------------------------------------------------------- registry

_lock = threading.Lock()
_registered: dict[int, weakref.ref[SecretSet | SecretFiles]] = {}
_tickets = itertools.count()
"""Registrations are keyed by ticket, not `id()`: a collected set's id may be reused by the next one."""
_seen: dict[str, str] = {}
"""Secret values read from the process's environment, kept once seen: a key deleted from `os.environ`
after it was printed is still a key."""
_version = 0
_cache: tuple[int, Redactor] | None = None


def register(secrets: SecretSet | SecretFiles) -> Callable[[], None]:
    """Make `secrets` count everywhere in the process until the returned function is called (or `secrets`
    is collected); also reads the process's environment for secret values, and a `SecretFiles` its files."""
    global _version
    key = next(_tickets)

    def collected(_: object) -> None:
        forget()

    def forget() -> None:
        global _version
        with _lock:
            if _registered.pop(key, None) is not None:
                _version += 1

    with _lock:
        _registered[key] = weakref.ref(secrets, collected)
        _version += 1
    refresh()
    return forget


def _sets() -> list[SecretSet | SecretFiles]:
    return [s for s in (ref() for ref in list(_registered.values())) if s is not None]


_learned: dict[str, str] = {}
"""Values of secret files tools read outside what a `SecretFiles` watches, kept for the process's life."""
_checking = threading.Lock()
"""One check of the files at a time: two would read the same changed file twice."""


def learn_file(name: str, text: str | None = None, *, path: Path | None = None) -> None:
    """Take the values of a secret file a tool reads (`name` as rules see it), before its output is shown:
    from `text` when the tool holds it, else read from `path`."""
    values = values_in(name, text) if text is not None else read_values(path, name) if path is not None else {}
    found = {v: n for v, n in values.items() if v not in _learned}
    if found:
        _bump(lambda: _learned.update(found))


def _bump(change: Callable[[], object]) -> None:
    global _version
    with _lock:
        change()
        _version += 1


def _check_files() -> None:
    """Re-read the watched secret files that changed (a few stats when none did)."""
    with _checking:
        if any([s.check() for s in _sets() if isinstance(s, SecretFiles)]):
            _bump(lambda: None)


def refresh(env: Mapping[str, str] | None = None) -> None:
    """Learn the secret values now in the process's environment (a key set in a cell after the workspace
    was made) and in the watched secret files; cheap enough to call once per run and per process started."""
    global _version
    _check_files()
    env = os.environ if env is None else env
    hidden = [pattern for s in _sets() for pattern in s.hidden]
    found = {value: name for name, value in list(env.items())
             if len(value) >= MIN_LENGTH and value not in _seen and (looks_secret(name) or _named(name, hidden))}
    if found:
        with _lock:
            _seen.update({v: n for v, n in found.items() if v not in _seen})
            _version += 1


def active() -> Redactor:
    """The redactor of every secret known in the process; rebuilt only when that changes."""
    global _cache
    cache = _cache
    if cache is not None and cache[0] == _version:
        return cache[1]
    with _lock:
        version = _version
        values = dict(_seen)
        sets = _sets()
        for secrets in sets:
            if not isinstance(secrets, SecretFiles):
                values.update(secrets.values)
        # A file's value that a variable also holds is labelled by the variable, as it always was.
        named = {value.lower() for value in values}
        for source in [_learned, *(s.values for s in sets if isinstance(s, SecretFiles))]:
            for value, name in source.items():
                if value.lower() not in named:
                    named.add(value.lower())
                    values[value] = name
    redactor = Redactor(values)
    _cache = (version, redactor)
    return redactor


def redact(text: str) -> str:
    """`text` with every known secret value replaced by its label; a watched file changed meanwhile counts."""
    _check_files()
    return active().redact(text)


def child_env(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without the variables a tool's process must not see: secret names, the configured names and
    patterns, and any variable holding a known secret value."""
    refresh(env)
    hidden = [pattern for s in _sets() for pattern in s.hidden]
    known = active().values
    return {name: value for name, value in env.items()
            if not (looks_secret(name) or _named(name, hidden) or value.lower() in known)}
