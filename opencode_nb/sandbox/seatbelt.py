"""macOS: a command under `sandbox-exec` with a Seatbelt profile that mirrors the Linux sandbox.

The profile starts from "allow" and takes away what matters, rather than starting from "deny" and
listing every Mach service a compiler or `git` might look up: writes outside the writable directories,
the network (unless allowed), signals to processes outside the sandbox, and writes to the files that steer
the agents (`protected.py`), existing or not, with the folders leading to them inside the project, and any
access to our data dirs (`private.py`) but for the command's own folders there. Paths
are passed as `-D` parameters, so no path needs quoting inside the profile, and are resolved first:
Seatbelt matches real paths (`/private/tmp`, not `/tmp`).

macOS has no private /tmp, so the per-user `$TMPDIR` (under /var/folders, private to the user) stays
writable. Other processes remain visible (`ps`), though they cannot be signalled. `sandbox-exec` is
deprecated by Apple but still ships; this profile is generated and unit-tested on Linux, never run there.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from . import private

SANDBOX_EXEC = "/usr/bin/sandbox-exec"

DEVICES = ('(literal "/dev/null")', '(literal "/dev/zero")', '(literal "/dev/dtracehelper")',
           '(regex #"^/dev/fd/[0-9]+$")', '(regex #"^/dev/tty")')
"""Devices a command writes to in the ordinary course (`> /dev/null`, its own terminal)."""


def profile(writable_count: int, *, network: bool, protected_count: int = 0, pinned_count: int = 0,
            private_count: int = 0, inside_private: Sequence[int] = ()) -> str:
    """The profile text; directory `i` of the writable ones is the parameter `WRITABLE_i`, protected path `i`
    (`protected.py`) is `PROTECTED_i`, and folder `i` that leads to one inside a writable folder is `PINNED_i`.
    Data dir `i` (`private.py`) is `PRIVATE_i`: neither read nor written, but for the writable folders inside
    one (their indexes `inside_private`), allowed again after it; the protected paths are denied last."""
    writable = [f'    (subpath (param "WRITABLE_{i}"))' for i in range(writable_count)]
    lines = [
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        "(allow file-write*",
        *writable,
        *(f"    {device}" for device in DEVICES),
        ")",
    ]
    if private_count:
        # the last matching rule decides: the data dir is denied after the project that may hold it is allowed
        lines += ["(deny file-read* file-write*",
                  *(f'    (subpath (param "PRIVATE_{i}"))' for i in range(private_count)), ")"]
        if inside_private:
            lines += ["(allow file-read* file-write*",
                      *(f'    (subpath (param "WRITABLE_{i}"))' for i in inside_private), ")"]
    if protected_count or pinned_count:
        # Seatbelt matches paths, not mounts: a path that does not exist yet is denied as well as one that
        # does, and a folder on the way to one cannot be renamed or removed (`mv .git x`).
        lines += [
            "(deny file-write*",
            *(f'    (subpath (param "PROTECTED_{i}"))' for i in range(protected_count)),
            *(f'    (literal (param "PINNED_{i}"))' for i in range(pinned_count)),
            ")",
        ]
    lines += [
        "(deny signal)",
        "(allow signal (target same-sandbox))",
    ]
    if not network:
        lines += ["(deny network*)"]
    return "\n".join(lines) + "\n"


def sandbox_exec_args(binary: str, *, writable: Sequence[Path], network: bool,
                      protected: Sequence[Path] = ()) -> list[str]:
    """The `sandbox-exec` command line that runs what follows it (append the command's argv)."""
    folders = [os.path.realpath(p) for p in writable if Path(p).is_dir()]
    tmp = os.environ.get("TMPDIR")
    if tmp and os.path.isdir(tmp) and os.path.realpath(tmp) not in folders:
        folders.append(os.path.realpath(tmp))
    kept = [_real(p) for p in protected]
    kept = [p for p in kept if any(p != Path(f) and Path(f) in p.parents for f in folders)]
    pinned: list[Path] = []
    for path in kept:
        area = next(Path(f) for f in folders if Path(f) in path.parents)
        pinned += [p for p in path.parents if area in p.parents and p not in pinned]
    hidden = [str(p) for p in private.folders()]
    inside = [i for i, f in enumerate(folders) if any(h != f and Path(h) in Path(f).parents for h in hidden)]
    args = [binary, "-p", profile(len(folders), network=network, protected_count=len(kept),
                                  pinned_count=len(pinned), private_count=len(hidden), inside_private=inside)]
    for i, folder in enumerate(folders):
        args += ["-D", f"WRITABLE_{i}={folder}"]
    for i, path in enumerate(kept):
        args += ["-D", f"PROTECTED_{i}={path}"]
    for i, path in enumerate(pinned):
        args += ["-D", f"PINNED_{i}={path}"]
    for i, folder in enumerate(hidden):
        args += ["-D", f"PRIVATE_{i}={folder}"]
    return args


def _real(path: Path) -> Path:
    """A path's real form, also for one that does not exist yet (its deepest existing folder resolved)."""
    missing: list[str] = []
    head = Path(path)
    while not os.path.lexists(head) and head != head.parent:
        missing.append(head.name)
        head = head.parent
    return Path(os.path.realpath(head), *reversed(missing))


def find() -> str | None:
    return SANDBOX_EXEC if os.access(SANDBOX_EXEC, os.X_OK) else shutil.which("sandbox-exec")


def probe_command(binary: str) -> list[str]:
    """A command that succeeds only where `sandbox-exec` applies a profile here."""
    return [binary, "-p", profile(0, network=False), "/usr/bin/true"]
