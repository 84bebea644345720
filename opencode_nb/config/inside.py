"""Reading a file the configuration names inside the project, never through a link that leads out of it.

`{file:prompt.md}` and `instructions: [notes.md]` put a file's text in front of the model at every run. The
config guard judges the configuration files when they change (guard.py), but the files they name are not
configuration: a sandboxed command may replace `prompt.md` by a link to `~/notes.txt` (or make `docs` a link to
`~`) after the person confirmed the configuration, and nothing the guard looks at changes. The text would then
come from outside the project, which the agent's `external_directory` rules may keep from it.

So a path written inside the project is read only if it still ends inside the project, judged on the file as
opened (`/proc/self/fd`, or the resolved path where there is none): a link swapped in between a check and the
read is seen. A path written outside the project (`{file:~/prompts/review.md}`) is the person's choice, judged by
the guard when it was written (reaches.py), and is read as written.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["LeadsOut", "read_text"]


class LeadsOut(OSError):
    """The path is inside the project but a link on the way leads outside it."""


def read_text(path: Path, root: Path | None) -> str:
    """The file's text (UTF-8), refused with `LeadsOut` when it was written inside `root` and what was opened is
    outside it. A FIFO or a device is refused too (opening does not wait for a writer).

    Raises:
        LeadsOut: a link leads out of the project; its `filename` is where it leads.
        OSError, UnicodeDecodeError: as reading the file would.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if root is not None and _written_inside(path, root):
            opened = _opened(fd, path)
            if not _within(opened, root):
                raise LeadsOut(0, f"a link leads it outside the project, to {opened}", str(opened))
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file", str(path))
        with os.fdopen(fd, "rb", closefd=False) as source:
            return source.read().decode("utf-8")
    finally:
        os.close(fd)


def _opened(fd: int, path: Path) -> Path:
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:  # no /proc (macOS): the path as resolved now
        return Path(os.path.realpath(path))


def _written_inside(path: Path, root: Path) -> bool:
    lexical = Path(os.path.normpath(path))
    return _within(lexical, root) or _within(lexical, Path(os.path.realpath(root)))


def _within(path: Path, root: Path) -> bool:
    real_root = Path(os.path.realpath(root))
    return path in (real_root, root) or real_root in path.parents or root in path.parents
