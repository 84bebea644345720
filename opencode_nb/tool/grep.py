"""grep: lines matching a regular expression, grouped by file, most recently changed files first.

ripgrep is used when it is on PATH (fast, and it reads .gitignore files itself); otherwise a pure-Python
search over the same files gives the same answer, more slowly. Both skip binary files, files over
`MAX_FILE_BYTES`, the always-ignored folders, what .gitignore files ignore, and symbolic links (ripgrep
follows none unless told to; the fallback walks and opens through descriptors without following any, so
nothing outside the project is searched by way of a link).

Files that conventionally hold secrets (`.env`, `id_rsa`: `secrets/files.py`) are searched only where
reading them is allowed: given as the path, such a file asks `read` first, as the read tool does; in a
folder it is searched when the rules (or an earlier "always") already allow reading it, and otherwise left
out and named in the result, whether or not it holds a match, so a refused file cannot be probed one
pattern at a time. ripgrep is told which ones by a listing of the candidates made beside the search, and
their lines are dropped from its answer. The values of a secret file whose lines are shown are learned as
secrets first, so those lines reach the model redacted.

A file with more than one name (a hard link) may be a file outside the project (`files/access.py`). Given as
the path, it asks `external_directory` as the read tool does; in a folder it is searched only where the
`external_directory` rules (or an earlier "always") already allow that file, and otherwise left out and named,
match or not, like a secret file. ripgrep does not say how many names a file has, so its listing of the
folder is looked at beside the search (one `lstat` per file), and a file that gained a name meanwhile is
dropped from its answer too.

The fallback matches with the `regex` package rather than `re` for one reason: its matching takes a
timeout. A backtracking pattern (`(a+)+$` on a long line) cannot be interrupted in `re`, not even from
another thread; with a timeout each file gets `FILE_BUDGET_S` and the search `SEARCH_BUDGET_S`, and what
was skipped is named. ripgrep's own engine never backtracks, so it needs no bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import regex
from pydantic import BaseModel, Field

from .. import secrets
from ..errors import ToolError
from ..permission.rules import evaluate
from .base import Tool, ToolContext, ToolResult, for_person, inside, relative, shown, workspace_root
from .files.access import open_checked, other_names
from .files.globpattern import glob_matcher
from .files.ignore import ALWAYS_IGNORED, IgnoreRules
from .files.safeopen import Opened, open_entry
from .files.textfile import open_error

LIMIT = 100
"""Matches shown; more means the pattern should be narrower."""
MAX_LINE = 300
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_COLLECTED = 5000
"""Matches gathered before sorting; beyond this the count is reported as a lower bound."""

FILE_BUDGET_S = 2.0
"""Matching time one file may take in the pure-Python search. Python's regular expressions backtrack, and a
pattern such as `(a+)+$` on a long line would run for hours; past this the file is skipped and named."""
SEARCH_BUDGET_S = 20.0
"""Time the whole pure-Python search may take; past it the search stops and says so."""

RG_LINE_LIMIT = 4 * MAX_FILE_BYTES
"""One JSON line from rg carries a whole matched line, which in a minified file can be megabytes long."""

Match = tuple[Path, int, str]


class GrepParams(BaseModel):
    pattern: str = Field(description=r"Regular expression to search file contents for, e.g. 'def \w+_loss\('")
    path: str | None = Field(None, description="Directory (or single file) to search; defaults to the working folder")
    include: str | None = Field(None, description='Only search files matching this glob, e.g. "*.py" or "*.{py,ipynb}"')


class GrepTool(Tool[GrepParams]):
    id = "grep"
    params = GrepParams

    async def execute(self, params: GrepParams, ctx: ToolContext) -> ToolResult:
        if not params.pattern:
            raise ToolError("pattern is empty. Give a regular expression to search for.")
        # The model's own mistakes (a bad glob, a bad regular expression) are told before anything is opened.
        included = glob_matcher(params.include) if params.include else None
        rg = shutil.which("rg")
        compiled = None if rg else compile_regex(params.pattern)
        with await open_checked(ctx, params.path or ".", folders=True) as opened:
            target = opened.path
            await ctx.ask("grep", [params.pattern], always=["*"], metadata={"path": str(target)})
            if opened.kind == "missing":
                raise ToolError(f"Path not found: {shown(ctx, target)}. Give an existing directory or file as path.")
            if opened.kind == "error":
                raise ToolError(open_error(opened, shown(ctx, target)))
            if opened.kind == "other":
                raise ToolError(f"{shown(ctx, target)} is not a regular file (a device, FIFO or socket), so it is "
                                "not searched.")
            if opened.kind == "file" and secrets.is_secret_file(relative(ctx, target)):
                title = relative(ctx, target)
                await ctx.ask("read", [title], always=[title], metadata={"path": str(target)})
            withheld = _Withheld(ctx)
            if compiled is None:
                assert rg is not None
                found = await search_checked(rg, params.pattern, opened, params.include, withheld, included)
            else:
                root = workspace_root(ctx)
                top = target if opened.kind == "dir" else target.parent
                rules = IgnoreRules(top, root if inside(top, root) else None)
                found = await asyncio.to_thread(search_python, compiled, opened, included, rules, withheld)
            await asyncio.to_thread(withheld.learn_shown, found.matches)
        text = format_matches(order(found.matches), lambda p: shown(ctx, p), found.complete)
        person = for_person(matches_summary(found.matches, found.complete and not found.out_of_time),
                            text.split("\n\n(Showing ")[0])
        text += withheld.note()
        text += found.notes(lambda p: shown(ctx, p))
        return ToolResult(params.pattern, text, {**person,
            "matches": len(found.matches), "complete": found.complete and not found.out_of_time,
            "engine": "rg" if rg else "python", "slow_files": len(found.slow), "withheld": len(withheld.paths),
            "linked": len(withheld.linked)})


class _Withheld:
    """Which files a folder search leaves out: those holding secrets that reading is not already allowed for,
    and those with other names (hard links) that `external_directory` does not already allow."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.paths: list[Path] = []
        self.linked: list[Path] = []

    def skips_linked(self, path: Path, info: os.stat_result | None) -> bool:
        """Whether to leave out `path`, opened as `info`, for its other names (and name it)."""
        if not other_names(info) or not inside(path, workspace_root(self.ctx)):
            return False
        if path in self.linked:
            return True
        pattern = str(path)
        allowed: str
        if self.ctx.rules is not None:
            allowed = evaluate("external_directory", pattern, self.ctx.rules("external_directory")).action
        else:
            allowed = self.ctx.permitted("external_directory", pattern) if self.ctx.permitted is not None else "ask"
        if allowed == "allow":
            return False
        self.linked.append(path)
        return True

    def skips(self, path: Path) -> bool:
        """Whether to leave `path` out (and name it); a file given as the search's path was asked about."""
        name = relative(self.ctx, path)
        if not secrets.is_secret_file(name) or self._allowed(name):
            return False
        if path not in self.paths:
            self.paths.append(path)
        return True

    def _allowed(self, name: str) -> bool:
        if self.ctx.rules is not None:
            return evaluate("read", name, self.ctx.rules("read")).action == "allow"
        return self.ctx.permitted is not None and self.ctx.permitted("read", name) == "allow"

    def learn_shown(self, matches: list[Match]) -> None:
        """Learn the values of the secret files whose lines will be shown, so they are shown redacted."""
        for path in dict.fromkeys(p for p, _, _ in matches):
            name = relative(self.ctx, path)
            if secrets.is_secret_file(name):
                with contextlib.suppress(OSError), path.open("rb") as file:
                    secrets.learn_file(name, file.read(MAX_FILE_BYTES).decode("utf-8", errors="replace"))

    def note(self) -> str:
        return self._secrets_note() + self._linked_note()

    def _listed(self, paths: list[Path]) -> tuple[str, bool]:
        names = sorted(shown(self.ctx, p) for p in paths)
        return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else ""), len(names) != 1

    def _secrets_note(self) -> str:
        if not self.paths:
            return ""
        shown, many = self._listed(self.paths)
        return (f"\n\n(Not searched: {len(self.paths)} file{'s' if many else ''} that usually "
                f"hold{'' if many else 's'} secrets "
                f"({shown}); reading them needs the person's permission. To search one, give its path as the "
                "path; that asks the person first.)")

    def _linked_note(self) -> str:
        if not self.linked:
            return ""
        shown, many = self._listed(self.linked)
        return (f"\n\n(Not searched: {len(self.linked)} file{'s' if many else ''} with more than one name (hard "
                f"links: {shown}); another name may be outside the project, so "
                f"{'they are' if many else 'it is'} judged by the external_directory rules, which do not allow "
                f"{'them' if many else 'it'} here. To search one, give its path as the path; that asks the person "
                "unless the rules deny it.)")


@dataclass
class Found:
    matches: list[Match] = field(default_factory=list)
    complete: bool = True
    """False when the search stopped at `MAX_COLLECTED` matches."""
    slow: list[Path] = field(default_factory=list)
    """Files left unsearched because matching took longer than `FILE_BUDGET_S` on them."""
    out_of_time: bool = False

    def notes(self, name: Callable[[Path], str]) -> str:
        """What the model should know about what was not searched, and what to do about it."""
        out = ""
        if self.slow:
            shown = ", ".join(name(p) for p in self.slow[:5]) + (" and others" if len(self.slow) > 5 else "")
            out += (f"\n\n(Skipped {len(self.slow)} file{'s' if len(self.slow) != 1 else ''} where matching took "
                    f"over {FILE_BUDGET_S:g} s: {shown}. The pattern probably backtracks catastrophically (nested "
                    "repetition such as (a+)+ or (\\w+\\s?)+); rewrite it without the nested repetition to "
                    "search them.)")
        if self.out_of_time:
            out += (f"\n\n(The search stopped after {SEARCH_BUDGET_S:g} s; later files were not searched. Narrow "
                    "the path or include, or simplify the pattern.)")
        return out


def compile_regex(pattern: str) -> regex.Pattern[str]:
    """The pattern for the pure-Python search, compiled by `regex`, whose matching can be given a timeout.

    Raises:
        ToolError: the pattern is not a valid regular expression.
    """
    try:
        return regex.compile(pattern)
    except (regex.error, ValueError, OverflowError) as exc:
        raise ToolError(f"Invalid regular expression {pattern!r}: {exc}. Escape special characters such as "
                        r"( ) [ ] . with a backslash to match them literally.") from None


def search_python(compiled: regex.Pattern[str], opened: Opened, included: Callable[[PurePosixPath], bool] | None,
                  rules: IgnoreRules, withheld: _Withheld | None = None) -> Found:
    """The matches under the opened target, reading every file through a descriptor opened without following
    links, and within `FILE_BUDGET_S` of matching per file and `SEARCH_BUDGET_S` in all."""
    found = Found()
    deadline = time.monotonic() + SEARCH_BUDGET_S
    if opened.kind == "file":
        _search_file(compiled, opened, found, deadline)
        return found
    for path, dir_fd, name in rules.entries(opened.fd):
        if included is not None and not included(PurePosixPath(path.relative_to(rules.top).as_posix())):
            continue
        if time.monotonic() >= deadline:
            found.out_of_time = True
            break
        if withheld is not None and withheld.skips(path):
            continue
        with open_entry(dir_fd, name, path) as entry:
            if entry.kind == "file" and not (withheld is not None and withheld.skips_linked(path, entry.stat)):
                _search_file(compiled, entry, found, deadline)
        if len(found.matches) >= MAX_COLLECTED:
            found.complete = False
            break
    return found


def _search_file(compiled: regex.Pattern[str], opened: Opened, found: Found, deadline: float) -> None:
    assert opened.stat is not None
    if opened.stat.st_size > MAX_FILE_BYTES:
        return
    try:
        data = opened.read_bytes(MAX_FILE_BYTES + 1)
    except OSError:
        return
    if b"\0" in data[:8192]:
        return
    give_up = min(time.monotonic() + FILE_BUDGET_S, deadline)
    hits: list[Match] = []
    try:
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            left = give_up - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if compiled.search(line, timeout=left):
                hits.append((opened.path, number, line))
                if len(found.matches) + len(hits) >= MAX_COLLECTED:
                    break
    except TimeoutError:
        found.slow.append(opened.path)
        return
    found.matches += hits


async def search_checked(rg: str, pattern: str, opened: Opened, include: str | None,
                         withheld: _Withheld | None = None,
                         included: Callable[[PurePosixPath], bool] | None = None) -> Found:
    """ripgrep over the opened target. rg looks the path up again by name, so the name must still lead to
    the opened file or folder both before rg starts and after it ends; a swap in between is refused."""
    replaced = ToolError(f"{opened.path} was replaced while it was searched; nothing from it is shown. Call grep "
                         "again.")
    if not _still_there(opened):
        raise replaced
    if withheld is not None and opened.kind == "dir":
        candidates = await list_secret_candidates(rg, opened.path, included)
        # The listing and its `lstat`s run while rg searches, not before it.
        listing = asyncio.ensure_future(_listed_with_other_names(rg, opened.path, include))
        try:
            matches, complete = await search_rg(rg, pattern, opened.path, include)
        except BaseException:
            listing.cancel()
            with contextlib.suppress(BaseException):
                await listing
            raise
        linked = await listing
        matched = await asyncio.to_thread(_with_other_names, list(dict.fromkeys(m[0] for m in matches)))
        skipped = {path for path in candidates if withheld.skips(path)}
        skipped |= {path for path, info in [*linked, *matched] if withheld.skips_linked(path, info)}
        matches = [m for m in matches if m[0] not in skipped]
    else:
        matches, complete = await search_rg(rg, pattern, opened.path, include)
    if not _still_there(opened):
        raise replaced
    return Found(matches, complete)


def _still_there(opened: Opened) -> bool:
    assert opened.fd is not None
    try:
        return os.path.samestat(os.stat(opened.path, follow_symlinks=False), os.fstat(opened.fd))
    except OSError:
        return False


def _rg_args(rg: str, include: str | None) -> list[str]:
    # The same files as the fallback: .gitignore even outside a git checkout, hidden files, the usual skips.
    args = [rg, "--no-messages", "--hidden", "--no-require-git", "--no-ignore-global", "--no-config",
            "--max-filesize", str(MAX_FILE_BYTES)]
    for skipped in ALWAYS_IGNORED:
        args += ["--glob", "!" + skipped.rstrip("/")]
    if include:
        args += ["--glob", include]
    return args


async def _listed_with_other_names(rg: str, target: Path, include: str | None) -> list[tuple[Path, os.stat_result]]:
    return await asyncio.to_thread(_with_other_names, await list_files(rg, target, include))


async def list_files(rg: str, target: Path, include: str | None) -> list[str]:
    """The files a search of the folder `target` opens, as ripgrep lists them: names, not `Path`s (at 10k
    files, making those on the event loop took longer than ripgrep's search)."""
    return await _rg_lines([*_rg_args(rg, include), "--files", "--", str(target)])


def _with_other_names(paths: Iterable[str | Path]) -> list[tuple[Path, os.stat_result]]:
    """The regular files among `paths` that have more than one name, with what `lstat` says of them."""
    out = []
    for path in paths:
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if other_names(info):
            out.append((Path(path), info))
    return out


@contextlib.asynccontextmanager
async def _reaped(proc: asyncio.subprocess.Process) -> AsyncIterator[asyncio.subprocess.Process]:
    """Kills and waits for `proc` when the body fails or is cancelled, so a search the model's turn abandons
    leaves neither a running rg nor a zombie behind; the failure still propagates."""
    try:
        yield proc
    except BaseException:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
        raise


async def _rg_lines(args: list[str]) -> list[str]:
    proc = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.DEVNULL)
    async with _reaped(proc):
        out, _ = await proc.communicate()
    return [line for line in out.decode(errors="surrogateescape").splitlines() if line]


async def list_secret_candidates(rg: str, target: Path,
                                 included: Callable[[PurePosixPath], bool] | None) -> list[Path]:
    """The files the search of the folder `target` opens whose name may hold secrets: a superset (named like
    one, or under a folder named like one) that `secrets.is_secret_file` then judges exactly."""
    args = [*_rg_args(rg, None), "--files"]
    for name, secret in secrets.SECRET_FILES:
        if secret:
            args += ["--glob", name, "--glob", f"**/{name}/**"]
    paths = [Path(line) for line in await _rg_lines([*args, "--", str(target)])]
    if included is not None:  # `include` is one of rg's globs in the search; here it would widen the list
        paths = [p for p in paths if included(PurePosixPath(p.relative_to(target).as_posix()))]
    return paths


async def search_rg(rg: str, pattern: str, target: Path, include: str | None) -> tuple[list[Match], bool]:
    args = [*_rg_args(rg, include), "--json", "--regexp", pattern, "--", str(target)]
    proc = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, limit=RG_LINE_LIMIT)
    found: list[Match] = []
    complete = True
    async with _reaped(proc):
        assert proc.stdout is not None and proc.stderr is not None
        async for raw in proc.stdout:
            item = json.loads(raw)
            if item.get("type") != "match":
                continue
            if len(found) >= MAX_COLLECTED:
                complete = False
                proc.kill()
                break
            data = item["data"]
            text = data["lines"].get("text")
            if text is None:  # a line that is not valid UTF-8 comes base64-encoded
                text = "(line is not valid UTF-8)"
            found.append((Path(data["path"]["text"]), data["line_number"], text.rstrip("\r\n")))
        err = await proc.stderr.read()
        code = await proc.wait()
    if complete and code not in (0, 1):
        message = err.decode(errors="replace").strip()
        raise ToolError(f"The search failed: {message}. If the regular expression is invalid, escape special "
                        r"characters such as ( ) [ ] . with a backslash to match them literally.")
    return found, complete


def order(matches: list[Match]) -> list[Match]:
    """Files most recently modified first (what was just edited is likely what matters), lines in order."""
    mtimes: dict[Path, float] = {}
    for path, _, _ in matches:
        if path not in mtimes:
            try:
                mtimes[path] = path.lstat().st_mtime
            except OSError:
                mtimes[path] = 0.0
    return sorted(matches, key=lambda m: (-mtimes[m[0]], str(m[0]), m[1]))


def matches_summary(matches: list[Match], complete: bool) -> str:
    if not matches:
        return "No matches" + ("" if complete else " (the search did not finish)")
    files = len({path for path, _, _ in matches})
    count = f"{len(matches)}" if complete else f"At least {len(matches)}"
    shown = f"; showing the first {LIMIT}" if len(matches) > LIMIT else ""
    return f"{count} match{'es' * (len(matches) != 1)} in {files} file{'s' * (files != 1)}{shown}"


def format_matches(matches: list[Match], name: Callable[[Path], str] = str, complete: bool = True) -> str:
    if not matches:
        return "No matches found."
    out: list[str] = []
    current: Path | None = None
    for path, number, line in matches[:LIMIT]:
        if path != current:
            if current is not None:
                out.append("")
            out.append(f"{name(path)}:")
            current = path
        text = line.strip()
        out.append(f"  {number}: {text if len(text) <= MAX_LINE else text[:MAX_LINE] + '…'}")
    total = f"{len(matches)}" if complete else f"more than {MAX_COLLECTED}"
    if len(matches) > LIMIT or not complete:
        out.append(f"\n(Showing {LIMIT} of {total} matches. Use a more specific pattern, path or include to see "
                   "the others.)")
    return "\n".join(out)
