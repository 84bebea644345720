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
top of `edit`. A write to a file that steers the agents or runs code later (`protected.py`: the config
files, `.opencode/`, `AGENTS.md`, `.git/hooks/`, `.git/config`, the hooks folder, the global config folder)
asks `agent_config` too, with the path relative to the project as its pattern. The default rules say ask for
both. Both are permissions only a rule naming them decides (`permission.NAMED_ONLY`): `edit: allow` names
`edit` only, and a catch-all `"*": allow` does not count for them either, since loosening the config is
exactly what a catch-all must not be able to do. A rule such as `agent_config: {".opencode/agent/*": allow}`
or `git_internals: {".git/info/exclude": allow}`, or a person's "always", lets such a write through.

A regular file of the project with more than one name (a hard link) may be a file outside it: the other name
can be anywhere on the same file system, nothing tells where, and a read shows that file as a write changes
it. So such a file counts as possibly outside for every file tool (`ask_hard_link`): reading it (read, grep
given the file) and writing it (write, edit) ask `external_directory` with the file's path as the pattern,
so `external_directory: deny` refuses it and the default asks, and the refusal says why. A search of a folder
leaves such files out unless the rules already allow them, and names them (`grep.py`). Making such a link is
what the shell sandbox prevents (the outside file is not there to link to, or is on another mount); these
checks are for links made before, or outside, the session.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable
from pathlib import Path

from ...errors import DeniedError
from ...permission.wildcard import wildcard_match
from ...sandbox.protected import AGENT_CONFIG, AGENT_CONFIG_REASON, for_project, hooks_dirs, permitted_write
from ..base import folder_pattern, inside, shown, working_folder, workspace_root
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
    if not given.is_absolute():  # from the folder the person works in, as their own code's paths are
        given = working_folder(ctx) / given
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


async def open_checked(ctx: ToolContext, raw: str, *, folders: bool, reads: bool = True) -> Opened:
    """Open what `raw` names once, after asking for every outside place it leads to; the caller closes it.

    Whatever was found (a file, a folder, nothing, an OS error) is only in the result: the caller asks its
    own permission and then says what is there. A file with other names is asked about as outside unless the
    caller does not read it (`reads=False`: list and glob, which only name files).
    """
    written, resolved = locate(ctx, raw)
    outside = Outside(ctx, folders=folders)
    await outside.check_given(written, resolved)
    opened = await asyncio.to_thread(open_path, resolved)
    try:
        await outside.check(opened.path)
        if reads:
            await ask_hard_link(ctx, opened, shown(ctx, opened.path), writing=False)
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


async def ask_git_internals(ctx: ToolContext, path: Path, pattern: str, diff: str) -> None:
    """A write into `.git` asks on its own, whatever `edit` rules allow (see the module docstring); `pattern` is
    the path relative to the project root."""
    if not in_git_dir(path, workspace_root(ctx)):
        return
    await ctx.ask(GIT_PERMISSION, [pattern], always=[pattern],
                  metadata={"path": str(path), "diff": diff, "reason": GIT_REASON})


async def ask_agent_config(ctx: ToolContext, path: Path, title: str, diff: str) -> None:
    """A write to a file that steers the agents asks on its own (see the module docstring); once allowed, the
    sandboxed commands running meanwhile do not take the write for theirs."""
    root = workspace_root(ctx)
    protected = for_project(root, ctx.directory, ctx.sandbox.policy.protected if ctx.sandbox else None)
    if not protected.covers(Path(os.path.realpath(path))) or in_git_dir(path, root):
        return  # git's own files ask `git_internals`, once
    pattern = protected.pattern(Path(os.path.realpath(path)))
    await ctx.ask(AGENT_CONFIG, [pattern], always=[pattern],
                  metadata={"path": str(path), "diff": diff, "reason": AGENT_CONFIG_REASON})
    permitted_write(Path(os.path.realpath(path)))


def other_names(info: os.stat_result | None) -> int:
    """How many names a regular file has besides the one it was opened by; 0 for anything else."""
    if info is None or not stat.S_ISREG(info.st_mode):
        return 0
    return max(info.st_nlink - 1, 0)


def hard_link_reason(title: str, info: os.stat_result, *, writing: bool) -> str:
    does = "a write changes that file too" if writing else "its content is that file's"
    return (f"{title} has {info.st_nlink} names (hard links); another may be outside the project, and {does}, so "
            "it is judged by the external_directory rules like a file outside.")


async def ask_hard_link(ctx: ToolContext, opened: Opened, title: str, *, writing: bool = True) -> None:
    """Reading or writing a file of the project that has other names asks `external_directory` for it, as for a
    file outside (see the module docstring); a file outside was asked about for its folder already.

    Raises:
        DeniedError: the `external_directory` rules deny it; the message says the file has other names.
    """
    info = opened.stat
    if info is None or not other_names(info) or not inside(opened.path, workspace_root(ctx)):
        return
    reason = hard_link_reason(title, info, writing=writing)
    try:
        await ctx.ask("external_directory", [str(opened.path)], always=[str(opened.path)],
                      metadata={"path": str(opened.path), "links": info.st_nlink, "reason": reason})
    except DeniedError as denied:
        raise DeniedError(denied.rules, reason=reason) from None
