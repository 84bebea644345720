"""What a file tool asks before it looks: `external_directory` for each place outside the project that a path
leads to, and `git_internals` before a write to git's own files.

Nothing about a place outside the project may reach the model before it is allowed there: not whether a
file exists, its kind, size or content. So the folder asked about comes from the path alone, the same
whatever is on disk: the parent folder for the tools that take a file (read, write, edit), the path itself
for those that take a folder (list, glob, grep). A path that leads outside is asked about as the model
wrote it (with `..` folded), then as its links resolve, then as the opened descriptor says it is (a link
flipped in between); each folder once. A refusal reads the same whatever was there, and the tools say
"not found" or "is a directory" only after these asks.

A write into `.git` can make git run code later (a hook; `core.fsmonitor`, `core.pager` or an alias in
.git/config), and so can one into the folder `core.hooksPath` names, so these also ask `git_internals`, on
top of `edit`. The default rules say `git_internals: ask` after their `"*": allow`. Rules are checked
last-match-wins among those naming the permission asked, and `edit: allow` (or `edit: {"*": allow}`) names
`edit` only, so it never reaches this ask: only a rule naming `git_internals` (e.g.
`git_internals: {".git/info/exclude": allow}`), or a global `"*"` rule that allows every permission, can
let such a write through without a person.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from pathlib import Path

from ...permission import wildcard_match
from ..base import folder_pattern, inside, workspace_root
from ..context import ToolContext
from .safeopen import Opened, open_path

RESOLVE_TRIES = 5
"""`realpath` fails when a link vanishes while it reads it; a path that keeps doing so is taken as written."""

GIT_PERMISSION = "git_internals"
"""Asked, on top of `edit`, before a write anywhere under a `.git` folder (or to a `.git` file)."""
GIT_REASON = ("Files under .git can make git run code (hooks, core.fsmonitor, core.pager, aliases) the next time "
              "anyone runs git here.")
"""Why `git_internals` is asked, shown with the request."""


def locate(ctx: ToolContext, raw: str) -> tuple[Path, Path]:
    """The path the model meant: as written (`~` expanded, `..` folded, nothing on disk looked at) and as
    its links resolve now."""
    try:
        given = Path(raw).expanduser()
    except RuntimeError:  # `~name` of no such user: a literal folder name, as a shell would leave it
        given = Path(raw)
    if not given.is_absolute():
        given = ctx.directory / given
    written = Path(os.path.normpath(given))
    for _ in range(RESOLVE_TRIES):
        try:
            return written, given.resolve()
        except OSError:  # a link vanished between the lstat and the readlink of `realpath`: look again
            continue
    return written, written  # it keeps changing: use it as written; the opened file's real path still decides


class Outside:
    """The `external_directory` asks of one tool call.

    Args:
        ctx: the call's context.
        folders: the tool takes a folder (the path itself is asked about), not a file (its parent is).
    """

    def __init__(self, ctx: ToolContext, *, folders: bool) -> None:
        self.ctx = ctx
        self.folders = folders
        self.root = workspace_root(ctx)
        self.asked: list[str] = []

    async def check_given(self, written: Path, resolved: Path) -> None:
        """Ask for a path the model gave, as `locate` found it.

        Where it leads outside, the place as written is asked about first, so that a refusal does not show
        where links out there point; where it leads into the project (a link to it, `/tmp` being
        `/private/tmp` on macOS), the way it was written does not matter.
        """
        if not inside(resolved, self.root):
            await self.check(written)
        await self.check(resolved)

    async def check(self, path: Path) -> None:
        """Return when the tool may go to `path`; raises the permission errors of `ctx.ask` otherwise."""
        if inside(path, self.root):
            return
        folder = path if self.folders else path.parent
        pattern = folder_pattern(folder)
        if any(wildcard_match(pattern, earlier) for earlier in self.asked):
            return  # within a folder already allowed for this call
        self.asked.append(pattern)
        await self.ctx.ask("external_directory", [pattern], always=[pattern],
                           metadata={"path": str(path), "directory": str(folder)})


async def open_checked(ctx: ToolContext, raw: str, *, folders: bool) -> Opened:
    """Open what `raw` names once, after asking for every outside place it leads to; the caller closes it.

    Whatever was found (a file, a folder, nothing, an OS error) is only in the result: the caller asks its
    own permission and then says what is there.
    """
    written, resolved = locate(ctx, raw)
    outside = Outside(ctx, folders=folders)
    await outside.check_given(written, resolved)
    opened = await asyncio.to_thread(open_path, resolved)
    try:
        await outside.check(opened.path)
    except BaseException:
        opened.close()
        raise
    return opened


def in_git_dir(path: Path, root: Path, hooks: Callable[[Path], list[Path]] | None = None) -> bool:
    """Whether `path` is a `.git` folder or file, anything under one (any repository, nested ones too), or
    under the folder the project's git config names as `core.hooksPath` (`.husky/_`, `.githooks`).

    Case and trailing dots or spaces are ignored: case-insensitive file systems (macOS) and Windows treat
    `.GIT` and `.git.` as `.git`. `hooks` stands in for `hooks_dirs`, e.g. cached over the paths of one line.
    """
    parts = path.relative_to(root).parts if inside(path, root) else path.parts
    if any(part.casefold().rstrip(". ") == ".git" for part in parts):
        return True
    return any(path == folder or folder in path.parents for folder in (hooks or hooks_dirs)(root))


_HOOKS_PATH = re.compile(r"""^\s*hookspath\s*=\s*("?)(.*?)\1\s*(?:[#;].*)?$""", re.IGNORECASE)


def hooks_dirs(root: Path) -> list[Path]:
    """The hook folders `core.hooksPath` names in the project's own `.git/config` (others, in the person's
    global config, are outside the project and ask `external_directory` anyway)."""
    try:
        text = (root / ".git" / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found: list[Path] = []
    section = ""
    for line in text.splitlines():
        header = re.match(r"^\s*\[\s*([^\]\s\"]+)", line)
        if header:
            section = header.group(1).casefold()
            continue
        value = _HOOKS_PATH.match(line) if section == "core" else None
        if value and value.group(2):
            folder = Path(os.path.expanduser(value.group(2)))
            found.append(Path(os.path.realpath(folder if folder.is_absolute() else root / folder)))
    return found


async def ask_git_internals(ctx: ToolContext, path: Path, title: str, diff: str) -> None:
    """A write into `.git` asks on its own, whatever `edit` rules allow (see the module docstring)."""
    if not in_git_dir(path, workspace_root(ctx)):
        return
    await ctx.ask(GIT_PERMISSION, [title], always=[title],
                  metadata={"path": str(path), "diff": diff, "reason": GIT_REASON})
