"""The project's files that a local MCP server's command runs, and their digest.

Approving a server the project defines approves code. Its entry (`command: [python, server.py]`) names that code
but is not it: an agent that may write the project could change `server.py` and leave the entry as it was, and
the next start would run the new code with the entry's `environment` and no question. So the approval is keyed by
the entry and by the content of the project files its command runs (approval.py); a change asks again, naming
the files that changed.

What is covered, each only inside the project root (links resolved: a link is recorded by where it points, and
followed only when that stays inside the project):

- every word of the command that names a project file: the program (`./bin/server`, `.venv/bin/python`), a
  script (`server.py`, `x.js`, `run.sh`), an option's value (`--config=conf.toml`), and the words of a quoted
  command line handed to a shell (`sh -c "python server.py"`);
- `-m pkg` after a `python*` or `uv` word: the module's file, or the package's `__init__.py` and `__main__.py`;
- for Python files found so, the project modules they import (`import helpers`, `from .db import x`), looked for
  where Python would: beside the script, in the project root, and relative to the package for relative
  imports, and the compiled copies beside each (`__pycache__/helpers.cpython-311.pyc`: one stamped with the
  source's size and time runs in its place; a first start that writes them asks once more). A name built at
  run time (`importlib.import_module(name)`, `__import__`) is not followed;
- the files that decide what a runner runs: `pyproject.toml` and `uv.lock` for `uv`/`uvx`, `package.json` and
  its lock files for `npm`/`npx`/`pnpm`/`yarn`/`bun`;
- the environments in the project the command runs from, as one tree each (`ENVIRONMENTS`): a virtual
  environment a named program lies in (a folder with `pyvenv.cfg`: `.venv/bin/python`), the project's `.venv`
  for `uv`, its `node_modules` for the npm family or a program inside it. Python runs every `.pth` line of its
  `site-packages` at start and imports whatever is installed there; `npx` runs a package from `node_modules`
  before the registry's. Each tree counts by every entry's path, size, inode and change time (`st_ctime`,
  which no one can set back), not by content: a few thousand `lstat`s, on the thread. Compiled files Python
  writes there count too (they run): a first start that compiles what an installer left uncompiled (uv
  does not compile by default) changes the tree, and the next start asks once more.

What is not: JavaScript's `require`/`import` and other languages' includes (only the files the command names),
data files the code reads, and code outside the project (installed packages, the interpreter; what `npx` or
`uvx` downloads is the registry's). A file past `MAX_FILE_BYTES` counts by its size and modification time, not
its content; past `MAX_FILES` files, the rest are not looked at. Hashing is bounded by both (in practice a
handful of small files: well under a millisecond each), and it runs on a thread. The files are hashed just
before each start (servers.py): a change made between that moment and the program reading them, by a run of
another session going on at the same time, is not seen.
"""

from __future__ import annotations

import ast
import hashlib
import os
import shlex
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

MAX_FILES = 200
"""Files hashed at most for one server; imports past this are not followed."""
MAX_FILE_BYTES = 32 * 1024 * 1024
"""A file bigger than this is recorded by size and modification time only."""
MANIFESTS: dict[str, tuple[str, ...]] = {
    "uv": ("pyproject.toml", "uv.lock"), "uvx": ("pyproject.toml", "uv.lock"),
    "npm": ("package.json", "package-lock.json", "npm-shrinkwrap.json"), "npx": ("package.json", "package-lock.json"),
    "pnpm": ("package.json", "pnpm-lock.yaml"), "yarn": ("package.json", "yarn.lock"),
    "bun": ("package.json", "bun.lockb", "bun.lock"),
}
"""Project files that decide what a runner program runs, by the program's name."""
ENVIRONMENTS: dict[str, str] = {"uv": ".venv",
                                **{name: "node_modules" for name in ("npm", "npx", "pnpm", "yarn", "bun")}}
"""The project's folder of installed code a runner program runs from, by the program's name."""
MAX_TREE_ENTRIES = 200_000
"""Entries of one environment listed at most; past it the tree counts as changed whenever it is looked at."""


@dataclass(frozen=True)
class ServerCode:
    """The project files a command runs, each with what it holds (a content hash, or where a link points)."""

    files: Mapping[str, str]
    """Path relative to the project root → `sha256:...`, `link:<target>` or `large:<size>:<mtime_ns>`."""

    @property
    def digest(self) -> str:
        text = "\n".join(f"{path}\0{held}" for path, held in sorted(self.files.items()))
        return hashlib.sha256(text.encode()).hexdigest()

    def changes(self, before: Mapping[str, str]) -> list[str]:
        """What differs from the files as approved, in words (`server.py changed`, `helpers.py is new`)."""
        out = [f"{path} changed" if path in before else f"{path} is new"
               for path, held in sorted(self.files.items()) if before.get(path) != held]
        return out + [f"{path} is gone" for path in sorted(before) if path not in self.files]


def server_code(command: list[str], root: Path, cwd: Path | None = None) -> ServerCode:
    """The files of project `root` that `command`, run in `cwd` (`root` by default), runs (see the module
    docstring). Reads files: call it on a thread from the event loop."""
    root = Path(os.path.realpath(root))
    here = Path(os.path.realpath(cwd)) if cwd is not None else root
    if not here.is_relative_to(root):
        here = root
    found = _Found(root, here)
    words = _words(command)
    for word in words:
        found.add_named(word)
    for module in _modules(words):
        found.add_module(module, here, here, main=True)
    for word in words:
        for folder in dict.fromkeys((here, root)):  # a runner finds its project where it runs, or above
            for manifest in MANIFESTS.get(os.path.basename(word), ()):
                found.add(folder / manifest)
            if os.path.basename(word) in ENVIRONMENTS:
                found.add_tree(folder / ENVIRONMENTS[os.path.basename(word)])
    found.follow_imports()
    for folder in list(found.environments):
        found.add_tree(folder)
    return ServerCode(dict(found.files))


def _words(command: list[str]) -> list[str]:
    """The command's words, the words of any that is a command line itself, and options' values."""
    words: list[str] = []
    for arg in command:
        words.append(arg)
        if any(c.isspace() for c in arg):
            try:
                words += shlex.split(arg)
            except ValueError:
                words += arg.split()
    for word in list(words):
        if word.startswith("-") and "=" in word:
            words.append(word.split("=", 1)[1])
    return words


def _modules(words: list[str]) -> Iterator[str]:
    runs_python = False
    for index, word in enumerate(words):
        name = os.path.basename(word)
        if name.startswith("python") or name == "uv":
            runs_python = True
        elif runs_python and word in ("-m", "--module") and index + 1 < len(words):
            yield words[index + 1]


class _Found:
    def __init__(self, root: Path, here: Path | None = None) -> None:
        self.root = root
        self.here = here or root
        """Where the command runs: its relative words start here."""
        self.files: dict[str, str] = {}
        self._python: list[tuple[Path, Path]] = []
        """Python files found, with the folder their plain imports are looked for in first."""
        self.environments: dict[Path, None] = {}
        """Environments (`ENVIRONMENTS`) a recorded file lies in, recorded whole at the end."""

    def add_named(self, word: str) -> None:
        if not word or word.startswith("-") or "\0" in word:
            return
        path = Path(word) if os.path.isabs(word) else self.here / word
        self.add(path)

    def add(self, path: Path, search: Path | None = None) -> None:
        """Record `path` if it is a project file; a link by its target, followed while it stays inside."""
        for _ in range(40):  # a loop of links ends here
            lexical = Path(os.path.normpath(path))
            if len(self.files) >= MAX_FILES or not lexical.is_relative_to(self.root):
                return
            relative = lexical.relative_to(self.root).as_posix()
            try:
                info = os.lstat(lexical)
            except (OSError, ValueError):
                return
            self.environments.update(dict.fromkeys(_environments(lexical, self.root)))  # `.venv/bin/python`, a link
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(lexical)
                self.files[relative] = f"link:{target}"
                path = lexical.parent / target
                continue
            if not stat.S_ISREG(info.st_mode) or relative in self.files:
                return
            self.files[relative] = _held(lexical, info)
            if lexical.suffix == ".py":
                self._python.append((lexical, search or lexical.parent))
                for compiled in sorted(lexical.parent.glob(f"__pycache__/{lexical.stem}.*.pyc")):
                    self.add(compiled)  # Python runs it instead of the source when its stamp matches the source's
            return

    def add_tree(self, folder: Path) -> None:
        """Record an environment folder of the project as one entry: `tree:<digest>` of its entries' stats."""
        relative = folder.relative_to(self.root).as_posix() + "/"
        if relative in self.files or not folder.is_dir() or folder.is_symlink():
            return
        self.files[relative] = _tree(folder)

    def add_module(self, dotted: str, base: Path, search: Path, *, main: bool = False) -> None:
        """The files of module `dotted` looked for in `base`: its packages' `__init__.py` on the way, then the
        module's own file (`__main__.py` too for `-m`). `search` is where its plain imports are looked for."""
        here = base
        parts = dotted.split(".")
        for index, part in enumerate(parts):
            package = here / part
            if package.is_dir():
                self.add(package / "__init__.py", search)
                if main and index == len(parts) - 1:
                    self.add(package / "__main__.py", search)
                here = package
                continue
            self.add(here / f"{part}.py", search)
            return

    def follow_imports(self) -> None:
        done = 0
        while done < len(self._python) and len(self.files) < MAX_FILES:
            file, search = self._python[done]
            done += 1
            for module, anchor in _imports(file):
                bases = [anchor] if anchor is not None else list(dict.fromkeys([search, self.here, self.root]))
                for base in bases:
                    if base.is_relative_to(self.root):
                        self.add_module(module, base, search)


def _imports(file: Path) -> Iterator[tuple[str, Path | None]]:
    """The modules `file` imports: (dotted name, the folder a relative import starts from, or None)."""
    try:
        tree = ast.parse(file.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            anchor = None
            if node.level:
                anchor = file.parent
                for _ in range(node.level - 1):
                    anchor = anchor.parent
            if node.module:
                yield node.module, anchor
            for alias in node.names:  # `from pkg import module` names a module as often as a name
                if alias.name != "*":
                    yield f"{node.module}.{alias.name}" if node.module else alias.name, anchor


def _held(path: Path, info: os.stat_result) -> str:
    if info.st_size > MAX_FILE_BYTES:
        return f"large:{info.st_size}:{info.st_mtime_ns}"
    digest = hashlib.sha256()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return "unreadable"
    with os.fdopen(fd, "rb") as source:
        while chunk := source.read(1 << 20):
            digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"


def _environments(file: Path, root: Path) -> list[Path]:
    """The environment folders `file` lies in: a virtual environment (`pyvenv.cfg`) or a `node_modules`."""
    found: list[Path] = []
    for folder in file.parents:
        if folder == root or root not in folder.parents:
            break
        if folder.name == "node_modules" or (folder / "pyvenv.cfg").is_file():
            found.append(folder)
    return found


def _tree(folder: Path) -> str:
    digest = hashlib.sha256()
    count = 0
    for here, dirs, names in os.walk(folder):  # does not follow links to folders
        dirs.sort()
        for name in sorted([*dirs, *names]):
            count += 1
            if count > MAX_TREE_ENTRIES:
                return f"too-large:{os.urandom(8).hex()}"  # never equal to what was approved: asks again
            path = os.path.join(here, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            digest.update(f"{os.path.relpath(path, folder)}\0{info.st_mode}\0{info.st_size}\0{info.st_ino}"
                          f"\0{info.st_ctime_ns}\n".encode())
    return f"tree:{digest.hexdigest()}"
