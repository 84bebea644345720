"""Linux: a command inside bubblewrap, with the filesystem read-only but for a few directories, no network.

Every choice below answers a way out that was tried on this machine:

- `--ro-bind / /` then `--bind` for each writable directory: the mounts are made read-only, so a write
  elsewhere fails with EROFS whatever the path, symlink or trick that led there. Writable binds come last,
  so they stay visible even below a directory that is masked.
- `--cap-drop ALL`: bwrap run by root keeps root's capabilities by default, and with CAP_SYS_ADMIN the
  sandboxed command could simply `mount -o remount,rw /`. As root we give back only the capabilities that
  make file permissions behave as they do outside (a root-run kernel editing a project owned by another
  user); none of them can undo a mount, make a device node or touch the network.
- `--unshare-pid` with a fresh `/proc`: the command sees only its own processes, so it can neither signal
  the kernel nor read another process's environment. When the command's shell exits, the namespace ends
  and takes every background job with it, even one that left the process group with `setsid`.
- `--remount-ro /proc`: most of /proc/sys checks only the file's owner, and bwrap's own cover of it is
  skipped when run by root, so a root-run command wrote the host's `kernel.core_pattern` (a program the
  kernel runs as root at the next crash). The fresh /proc is read-only as a whole.
- `--unshare-net`: only a private loopback exists. Unix sockets are not network, and a socket on disk is
  reachable through a read-only mount: the command also runs under the seccomp filter of
  `opencode_nb/sandbox/seccomp.py`, which refuses `socket(AF_UNIX)` (so no socket anywhere, `/var/tmp`
  included, can be connected to) and leaves `socketpair`. Where `network` rules may allow a host, the proxy's
  socket and the relay (`sandbox/relay.py`) are bound in read-only as `readable`, and the relay, the one
  process here that needs a Unix socket, installs that filter in the command instead of `--seccomp`. `/run`
  (Docker's and D-Bus's sockets) and Jupyter's runtime directory (kernel connection files with their signing
  keys) are masked by empty tmpfs as well.
- `--tmpfs /tmp`: commands get a private scratch /tmp, discarded afterwards; the shared
  `$TMPDIR/opencode_nb` is bound back in, and so, read-only, are the Python installation running us and the
  environments on PATH and the import path when they live under /tmp (a checkout built in /tmp, as CI
  machines do): without them `python` and the project's tools would vanish inside the sandbox.
- The files that steer the agents or run code later (`protected.py`) are bound read-only over the writable
  project, and the folders leading to them onto themselves, so they can be neither changed nor renamed away.
  A missing `.git/hooks` under a real `.git` is sealed by an empty read-only tmpfs (`protected.sealable`): no
  hook can appear in it while the process lives, not even between two after-checks; its empty mount point
  stays on the host.
- When the `external_directory` rules deny reading outside the project (`readable.py`), `/` is not
  bound at all: the command sees the system's folders (`SYSTEM`, /etc without its password hashes), the
  Python installation, the writable folders and the folders the rules allow, and nothing of $HOME or the
  rest of the machine, so `grep -R` through a link out, or a script opening an absolute path, finds nothing.
- Our data dirs (`private.py`: the checkpoint store's git config, the session database, the approvals, other
  processes' caches) are covered by an empty tmpfs, wherever they are, even inside the writable project;
  only the command's own folders there (tool output, its cache) are bound back (`out_of_sight`).
- `--dev /dev`: a minimal /dev (null, zero, random, tty, shm, pts), none of the host's disks or terminals.
- `--die-with-parent`: if the kernel dies, so does the sandbox.
- No `--new-session`: the caller already starts bwrap in a session of its own with stdin on /dev/null, so
  there is no terminal to inject keystrokes into, and keeping the command in bwrap's process group lets a
  timeout's SIGTERM reach it (see `process.py`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from . import private
from .protected import Guard

FILE_CAPABILITIES = ("CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID")
"""What a root-run sandbox keeps: root's way with file permissions, nothing else."""

MASKED = ("/run",)
"""Replaced by an empty tmpfs: local daemons' sockets live here, and a socket is reachable on a read-only mount."""
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")
"""What a command sees of the machine when reads outside the project are not allowed: programs, libraries,
and /etc (name resolution, users, TLS certificates, the programs' own settings)."""
ETC_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/ssl/private")
"""Hidden even then: a root-run command could read them."""


def bwrap_args(binary: str, *, writable: Sequence[Path], network: bool, cwd: Path,
               readable: Sequence[Path] = (), seccomp_fd: int | None = None, guard: Guard | None = None,
               shown: Sequence[Path] | None = None, env: Sequence[tuple[str, str]] = ()) -> list[str]:
    """The bwrap command line that runs what follows it (append the command's argv).

    Args:
        writable: directories bound read-write (existing ones only; missing ones are skipped).
        network: keep the host's network (else a private loopback only).
        readable: directories bound read-only over what was masked (the python worker's working folder,
            when it lies under /tmp).
        seccomp_fd: a descriptor holding a seccomp program the command runs under (it must be passed to
            bwrap's process).
        guard: the protected paths to keep read-only inside the writable folders (`protected.py`).
        shown: None shows the whole file system read-only; a list shows only the system's folders, the
            Python installation, the writable folders and these folders (read-only).
        env: variables set for the command over the environment it is given (`caches.py`'s).
    """
    args = [binary, "--ro-bind", "/", "/"] if shown is None else [binary, *_system()]
    args += ["--dev", "/dev", "--unshare-pid", "--proc", "/proc", "--remount-ro", "/proc"]
    mounts_from = len(args)
    args += ["--tmpfs", "/tmp"]
    masked = [Path(p) for p in (*MASKED, *jupyter_runtime()) if Path(p).is_dir() and not Path(p).is_symlink()]
    for path in masked:
        args += ["--tmpfs", str(path)]

    def hidden(path: Path) -> bool:
        if any(_within(path, h) for h in (Path("/tmp"), *masked)):
            return True
        return shown is not None and not any(_within(path, Path(s)) for s in SYSTEM)

    resolv = Path(os.path.realpath("/etc/resolv.conf"))
    if network and hidden(resolv) and resolv.exists():
        args += ["--ro-bind", str(resolv), str(resolv)]  # systemd-resolved keeps resolv.conf under /run
    bound = [p for p in [*readable, *_programs_under(hidden, never=[Path("/tmp"), *masked]), *(shown or ())]
             if p.exists()]
    for path in bound:
        args += ["--ro-bind", str(path), str(path)]
    for path in masked:  # a folder shown over a mask (`~/.local` over Jupyter's runtime) does not undo it
        if any(path != b and b in path.parents for b in bound):
            args += ["--tmpfs", str(path)]
    for path in writable:
        if path.is_dir():
            args += ["--bind", str(path), str(path)]
    if guard is not None:
        args += _guarded(guard, writable)
    for folder in private.folders():  # our data dirs, last (`out_of_sight`)
        args += out_of_sight(folder, args[mounts_from:])
    args += ["--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        args.append("--unshare-net")
    args += ["--die-with-parent", "--cap-drop", "ALL"]
    if os.geteuid() == 0:
        for capability in FILE_CAPABILITIES:
            args += ["--cap-add", capability]
    tempdir = Path(_tempdir())
    if tempdir != Path("/tmp") and not any(_within(tempdir, p) for p in writable):
        args += ["--setenv", "TMPDIR", "/tmp"]  # a TMPDIR elsewhere is read-only in here
    for name, value in env:
        args += ["--setenv", name, value]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--chdir", str(cwd), "--"]
    return args


def _system() -> list[str]:
    """The system's program and library folders and /etc, read-only, as they are (merged /usr links kept as
    links), with the password hashes and TLS private keys of /etc hidden."""
    args: list[str] = []
    for folder in SYSTEM:
        path = Path(folder)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), folder]
        elif path.is_dir():
            args += ["--ro-bind", folder, folder]
    for secret in ETC_SECRETS:
        path = Path(secret)
        if path.is_dir() and not path.is_symlink():
            args += ["--tmpfs", secret]
        elif path.is_file() and not path.is_symlink():
            args += ["--ro-bind", "/dev/null", secret]
    return args


def _guarded(guard: Guard, writable: Sequence[Path]) -> list[str]:
    """Protected paths read-only and their folders pinned (see `protected.py`). The `-try` forms: a path
    removed since the guard was taken is skipped rather than made as a mount point in the project."""
    args: list[str] = []
    for folder in guard.pinned:
        args += ["--bind-try", str(folder), str(folder)]
    for path in guard.kept:
        args += ["--ro-bind-try", str(path), str(path)]
    for folder in guard.sealed:  # after the pins: an empty read-only tmpfs, so nothing can appear in it
        args += ["--tmpfs", str(folder), "--remount-ro", str(folder)]
    for folder in writable:  # a writable folder inside a protected one stays writable
        if folder.is_dir() and any(folder != k and k in folder.parents for k in guard.kept):
            args += ["--bind", str(folder), str(folder)]
    return args


_OPERANDS = {"--tmpfs": 1, "--remount-ro": 1, "--bind": 2, "--ro-bind": 2, "--bind-try": 2, "--ro-bind-try": 2,
             "--symlink": 2}


def out_of_sight(folder: Path, mounts: Sequence[str]) -> list[str]:
    """`folder` (a data dir, `private.py`) replaced by an empty tmpfs, then every mount of `mounts` (the
    command line's mount options so far, in order) whose target lies strictly inside it made again, as it was.

    Last, after the writable binds and the protected paths: mounts are stacked in order, so a data dir inside
    the writable project is covered after the project's bind, and what comes back is only what the process
    was given there itself (its tool-output folder and cache folder writable; a project inside the data dir,
    with its protected paths read-only again). The replay repeats the options rather than asking each caller
    for the folders again, so nothing given can be lost and nothing else can return. Writes to the tmpfs land
    in memory and vanish with the sandbox."""
    args = ["--tmpfs", str(folder)]
    i = 0
    while i < len(mounts):
        option = mounts[i]
        count = _OPERANDS.get(option)
        if count is None:
            raise ValueError(f"out_of_sight cannot replay the bwrap option {option}")
        operands = list(mounts[i + 1:i + 1 + count])
        i += 1 + count
        target = Path(operands[-1])
        if target != folder and folder in target.parents:
            args += [option, *operands]
    return args


def _programs_under(hidden: Callable[[Path], bool], never: Sequence[Path] = ()) -> list[Path]:
    """What the sandbox would hide of this process's Python (its installations and import path, an editable
    install's source included) and of the environments on PATH (a `bin` with its environment, unless that
    is the home folder or `/`: then the `bin` alone)."""
    import sys

    broad = {Path("/"), Path.home(), *never}
    candidates = {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    candidates.update(Path(p) for p in sys.path if p and Path(p).is_dir())
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if entry:
            folder = Path(entry)
            candidates.add(folder.parent if folder.name == "bin" and folder.parent not in broad else folder)
    found: list[Path] = []
    for path in sorted(candidates):
        real = Path(os.path.realpath(path))
        for seen in {path, real}:
            if seen not in broad and hidden(seen) and seen not in found:
                found.append(seen)
    return found


def probe_command(binary: str) -> list[str]:
    """A command that succeeds only where bwrap can build the namespaces we use here.

    A bare `bwrap --ro-bind / / true` succeeds in containers that forbid the PID or network namespace,
    so the probe asks for those too.
    """
    return [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc", "--remount-ro",
            "/proc", "--unshare-net", "--unshare-ipc", "--die-with-parent", "--cap-drop", "ALL", "true"]


def jupyter_runtime() -> list[str]:
    """Where Jupyter keeps kernel connection files (with the key that signs messages) and server tokens."""
    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:
        return []
    try:
        return [os.path.realpath(jupyter_runtime_dir())]
    except Exception:  # a broken Jupyter configuration must not stop a shell command
        return []


def _tempdir() -> str:
    import tempfile

    return os.path.realpath(tempfile.gettempdir())


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
