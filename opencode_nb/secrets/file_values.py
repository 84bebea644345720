"""The values in files that hold secrets, so they are redacted like a secret variable's.

A rule can keep a tool from reading `.env` by name, but not a program that walks a folder itself (`grep -R
sk_ .`, `tar c .`, a script): what holds then is that the file's values are known secrets, so whatever
prints them reaches the model, the store and the tool-output folder as `[redacted: .env:STRIPE_KEY]`. And
once a person lets a tool read the file, the model still sees the values redacted: the person allowed
reading the file (its names, its layout, which keys are set), while the value itself stays a secret that
nothing the model writes should need in clear.

What is taken from each kind of file: for dotenv files the value of each `KEY=VALUE` line (quoted or not,
`export` before it, comments after it); for `.netrc` the `password` of each machine, for `.pgpass` the last
field of each line; for key files (`.pem`, `.key`, `id_*`) each line of the key's body, since a key is
printed line by line; for anything else (`credentials`, an unknown format) the values of `key = value`
lines. Values shorter than `MIN_LENGTH` are left out, as for variables.

`SecretFiles` learns them from the project without being told: when the workspace opens, and again
whenever `secrets.refresh` runs (every run, every process a tool starts, after every shell command),
which re-reads what changed. Where it looks is bounded, because a check runs that often: the secret files
in the project root and in folders at most `SCAN_DEPTH` below it, skipping the always-ignored folders,
at most `MAX_FOLDERS` folders and `MAX_FILE_BYTES` a file. A check stats those folders and files (about a
millisecond for the maximum) and reads only what changed. A secret file deeper down is learned when a tool
reads it (`learn_file`). A value once learned stays secret while the workspace is open, even if the file
changes: it may already have been printed.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from .files import is_secret_file
from .redactor import MIN_LENGTH

SCAN_DEPTH = 2
"""Folders below the project root whose secret files are learned unasked (`config/.env`, `services/api/.env`)."""
MAX_FOLDERS = 200
"""Folders watched at most: past this a monorepo's deeper `.env` files are learned when a tool reads them."""
MAX_FILE_BYTES = 256 * 1024
"""A secret file is small; a bigger file with such a name is data, not worth a read at every check."""
SKIPPED_FOLDERS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".ipynb_checkpoints",
                             ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox", "dist", "build"})
"""Folders nobody keeps secrets in that can hold thousands of entries."""

_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.\-]*)\s*[=:]\s*(.*?)\s*$")
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]+-----")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]+-----")


def values_in(name: str, text: str) -> dict[str, str]:
    """The secret values in a file's text, each with the label its redaction shows (`<name>:<KEY>`).

    Args:
        name: how the file is named in labels (its path relative to the project, as rules see it).
        text: the file's content.
    """
    found: dict[str, str] = {}
    base = name.rsplit("/", 1)[-1]
    if _PEM_BEGIN.search(text):
        found.update(_key_body(name, text))
    if base in (".netrc", "_netrc"):
        found.update(_netrc(name, text))
    elif base == ".pgpass":
        found.update(_pgpass(name, text))
    elif not found:
        found.update(_assignments(name, text))
    return {value: label for value, label in found.items() if len(value) >= MIN_LENGTH}


def _assignments(name: str, text: str) -> Iterator[tuple[str, str]]:
    for line in text.splitlines():
        match = _ASSIGNMENT.match(line)
        if match is None or line.lstrip().startswith(("#", ";", "[")):
            continue
        key, value = match.groups()
        yield _unquoted(value), f"{name}:{key}"


def _unquoted(value: str) -> str:
    """A dotenv value as a program loading it would see it: quotes taken off, a trailing comment dropped."""
    if value[:1] in ("'", '"'):
        end = value.find(value[0], 1)
        return value[1:end] if end > 0 else value[1:]
    return re.split(r"\s+#", value, maxsplit=1)[0].strip()


def _key_body(name: str, text: str) -> Iterator[tuple[str, str]]:
    """Each line of a key's body (and the body whole, as one line): `cat id_rsa` prints it line by line, and
    code that loads it often joins the lines."""
    inside = False
    body: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if _PEM_BEGIN.search(stripped):
            inside, body = True, []
        elif _PEM_END.search(stripped):
            inside = False
            if body:
                yield "".join(body), name
        elif inside and stripped and ":" not in stripped:  # `Proc-Type: 4,ENCRYPTED` headers are not the key
            body.append(stripped)
            yield stripped, name


def _netrc(name: str, text: str) -> Iterator[tuple[str, str]]:
    words = text.split()
    machine = "default"
    for at, word in enumerate(words[:-1]):
        if word == "machine":
            machine = words[at + 1]
        elif word in ("password", "account"):
            yield words[at + 1], f"{name}:{machine}"


def _pgpass(name: str, text: str) -> Iterator[tuple[str, str]]:
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        fields = re.split(r"(?<!\\):", line, maxsplit=4)
        if len(fields) == 5:
            yield fields[4].replace("\\:", ":").replace("\\\\", "\\"), f"{name}:{fields[0]}"


def read_values(path: Path, name: str) -> dict[str, str]:
    """The secret values of the file at `path` (not following a final link); nothing when it cannot be read
    or is too big to be a secret file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return {}
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return {}
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(MAX_FILE_BYTES)
    except OSError:
        return {}
    finally:
        os.close(fd)
    return values_in(name, data.decode("utf-8", errors="replace"))


class SecretFiles:
    """The secret files of one project and the values learned from them: a source the registry asks to
    `check` at each refresh. Its `values` only grow."""

    def __init__(self, root: Path, folders: tuple[Path, ...] = ()) -> None:
        """`root` is the project's, `folders` more folders in it whose own files are watched (the directory a
        workspace was opened in, below its git root)."""
        self.root = root
        self.hidden: tuple[str, ...] = ()
        """No variable names: these values are known by what they are, not where they are kept."""
        self.values: dict[str, str] = {}
        """Secret value → label, from every file checked so far."""
        self._folders: dict[Path, int | None] = {}
        """Watched folders → the change time they were listed at (None: not listed yet)."""
        self._files: dict[Path, tuple[int, int, int]] = {}
        """Secret files found → (inode, size, change time) when last read."""
        for folder in (root, *folders):
            if folder.is_relative_to(root):
                self._folders[folder] = None

    def check(self) -> bool:
        """Re-list folders and re-read files that changed since the last check; whether a value was learned."""
        before = len(self.values)
        for folder, seen in list(self._folders.items()):
            try:
                now = os.stat(folder, follow_symlinks=False).st_mtime_ns
            except OSError:
                continue
            if now != seen:
                self._folders[folder] = now
                self._list(folder)
        for path, seen_file in list(self._files.items()):
            try:
                info = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            key = (info.st_ino, info.st_size, info.st_mtime_ns)
            if key != seen_file:
                self._files[path] = key
                self.learn(path)
        return len(self.values) != before

    def learn(self, path: Path) -> None:
        """Take the values of the secret file at `path` (inside the project or not)."""
        for value, label in read_values(path, self._name(path)).items():
            self.values.setdefault(value, label)

    def _name(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else path.as_posix()

    def _list(self, folder: Path) -> None:
        depth = len(folder.relative_to(self.root).parts)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            path = Path(entry.path)
            try:
                if entry.is_dir(follow_symlinks=False):
                    if (depth < SCAN_DEPTH and entry.name not in SKIPPED_FOLDERS and path not in self._folders
                            and len(self._folders) < MAX_FOLDERS):
                        self._folders[path] = None
                        self._list_new(path)
                elif entry.is_file(follow_symlinks=False) and path not in self._files \
                        and is_secret_file(self._name(path)):
                    self._files[path] = (-1, -1, -1)  # read by the file pass of this check
            except OSError:
                continue

    def _list_new(self, folder: Path) -> None:
        try:
            self._folders[folder] = os.stat(folder, follow_symlinks=False).st_mtime_ns
        except OSError:
            return
        self._list(folder)
