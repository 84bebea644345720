"""Confining a forked copy of the kernel with the operating system, before the model's code runs in it.

A copy-on-write fork keeps the person's Python objects safe and nothing else: the child is the kernel's
twin, with its session key, its ports, its PID, its files and its shared memory. So the child, while it is
still only our code, puts itself behind what the OS enforces, and says which confinement applied:

**namespaces** (Linux with user namespaces, root or not, about 8 ms):
1. `unshare` a user namespace (same uid and gid inside), then mount, network, PID, IPC and UTS ones. A fork
   child is single-threaded, which `unshare` requires.
2. Mounts made private, then every mount read-only in one call; the Jupyter runtime folder (connection files
   with the kernel's signing key) and /run (daemons' sockets) masked; a size-capped tmpfs on the scratch
   folder, the only place that can be written; a /dev of its own with only null, zero, full, random and
   urandom, so no terminal of the person's is reachable.
3. Fork once more: the grandchild is PID 1 of the new PID namespace and runs the code. It sees no other
   process (no kill, no ptrace, no /proc/<kernel>), mounts a fresh, read-only /proc, and when it exits the
   kernel ends every process left in the namespace, `setsid` and double forks included. The child in
   between only waits and passes on how the grandchild ended.
4. The new network namespace has only a loopback that is down: no TCP, not even to the kernel's ports.

**landlock** (no user namespaces, as on Ubuntu 23.10+ without privilege): `landlock.py` denies writes
outside the scratch folder, TCP, ptrace and (ABI 6+) signals to anything outside; every `socket()` is
refused.

Either way, then: the shared mappings inherited from the kernel become private (`mappings.py`); secrets
leave the environment; no capability is left, now or after an exec (securebits locked, bounding set
emptied, no_new_privs); and the seccomp filter (`seccomp.py`) goes on last. Without a PID namespace the child
becomes a subreaper, so what the code starts, `setsid` or not, stays in its tree; and whatever the mechanism,
the child waits after sending its result until the supervisor has killed that tree (`await_end`).

**none**: nothing above is possible here (another OS, a kernel without either). The code then runs isolated
at the Python level only, which the result says, unless the workspace requires an OS sandbox.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, NoReturn

from . import landlock, mappings
from .linux import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    CLONE_NEWUTS,
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    PR_SET_CHILD_SUBREAPER,
    PR_SET_PDEATHSIG,
    Libc,
    load,
)
from .seccomp import Filter

Mechanism = Literal["namespaces", "landlock"]
MECHANISMS: tuple[Mechanism, ...] = ("namespaces", "landlock")
"""Strongest first: the first that works here is used."""

DEVICES = ("null", "zero", "full", "random", "urandom")
MASKED = ("/run",)
SCRATCH_PREFIX = "opencode-nb-scratch-"
PYTHON_ONLY = "isolated at the Python level only"


@dataclass(frozen=True)
class Report:
    """Which confinement applied to a run, as the child found it before the code ran."""

    mechanism: Literal["namespaces", "landlock", "none"]
    covers: tuple[str, ...] = ()
    why_not: tuple[str, ...] = ()
    """Why each stronger mechanism did not apply."""
    lost: tuple[str, ...] = ()
    """Shared mappings too large to copy, removed from the child."""

    @property
    def confined(self) -> bool:
        """Whether the OS confined it completely: namespaces, or Landlock from ABI 6 (below it, signals are
        not scoped and `covers` says "partial")."""
        return self.mechanism != "none" and "partial" not in self.covers

    def label(self) -> str:
        """One line for the tool card and the model."""
        if self.mechanism == "namespaces":
            return "confined by the OS (namespaces + seccomp)"
        if self.mechanism == "landlock":
            return f"confined by the OS (Landlock + seccomp: {', '.join(self.covers)})"
        return PYTHON_ONLY

    def to_json(self) -> dict[str, object]:
        return {"mechanism": self.mechanism, "covers": list(self.covers), "why_not": list(self.why_not),
                "lost": list(self.lost)}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Report:
        mechanism = data.get("mechanism")
        if mechanism not in ("namespaces", "landlock", "none"):
            raise ValueError(f"unknown confinement {mechanism!r}")
        fields: list[tuple[str, ...]] = []
        for key in ("covers", "why_not", "lost"):
            value = data.get(key) or ()
            if not isinstance(value, list | tuple):
                raise ValueError(f"confinement {key} is not a list: {value!r}")
            fields.append(tuple(str(x) for x in value))
        # `in` does not narrow an object to the Literal: `mechanism` is one of the three, checked above
        return cls(mechanism, *fields)  # type: ignore[arg-type]


@dataclass
class Plan:
    """Everything the child needs, made in the kernel before the fork so the child only executes it."""

    libc: Libc | None
    mechanisms: tuple[Mechanism, ...]
    scratch: str
    """A folder made for this run: the namespaces mount a tmpfs on it; Landlock lets it alone be written."""
    scratch_mb: int
    masked: tuple[str, ...]
    secrets: tuple[str, ...]
    """Environment variables the code must not see."""
    uid: int = field(default_factory=os.getuid)
    gid: int = field(default_factory=os.getgid)
    landlock_version: int = 0

    def remove_scratch(self) -> None:
        """After the run: what the code left in the scratch folder (Landlock), and the folder."""
        import shutil

        shutil.rmtree(self.scratch, ignore_errors=True)


_filters: dict[bool, Filter] = {}
"""Built once per process: a filter is the same program every time."""


def warm() -> None:
    """Do once, off the kernel's main thread, what the first confined run would otherwise pay for there:
    loading libc, building the seccomp programs, and removing the scratch folders of kernels that died
    during a run (empty with namespaces, whatever the code wrote with Landlock)."""
    libc = load()
    if libc is not None and not _filters:
        _filters.update({all_sockets: Filter(libc.arch, all_sockets=all_sockets) for all_sockets in (False, True)})
        remove_stale(tempfile.gettempdir())


def remove_stale(directory: str, prefix: str = SCRATCH_PREFIX) -> None:
    """Folders named `<prefix><pid>-…` for a process that no longer exists: a kernel killed during a run
    never removed them."""
    import re
    import shutil

    owned = re.compile(re.escape(prefix) + r"(\d+)-.+")
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            owner = owned.fullmatch(entry.name)
            if owner is None or not entry.is_dir(follow_symlinks=False):
                continue
            try:
                os.kill(int(owner.group(1)), 0)
            except ProcessLookupError:
                shutil.rmtree(entry.path, ignore_errors=True)
            except (PermissionError, OverflowError):
                continue


def prepare(mechanisms: Iterable[Mechanism] = MECHANISMS, *, scratch_mb: int = 1024,
            secrets: Iterable[str] = (), masked: Iterable[str] = ()) -> Plan:
    """The plan for one confined run. `mechanisms` narrows what may be tried (tests force the weaker ones)."""
    libc = load()
    wanted = tuple(m for m in MECHANISMS if m in set(mechanisms)) if libc is not None else ()
    scratch = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
    plan = Plan(libc, wanted, scratch, scratch_mb, tuple(p for p in (*MASKED, *masked) if os.path.isdir(p)),
                tuple(secrets))
    if libc is not None:
        warm()
        if "landlock" in wanted:
            plan.landlock_version = landlock.abi(libc)
    return plan


def enter(plan: Plan) -> Report:
    """Confine this process (a fork child, single-threaded) as strongly as this machine allows.

    With namespaces, this returns in a grandchild that runs the code; the process that called it waits for
    that grandchild and exits with its status, never returning. What could not apply is in the report.
    """
    why_not: list[str] = []
    libc = plan.libc
    if libc is None:
        return Report("none", why_not=(f"no confinement is available on {sys.platform}",))
    lost = _privatise(libc, why_not)
    if "namespaces" in plan.mechanisms:
        try:
            _namespaces(libc, plan)
        except OSError as exc:
            why_not.append(f"namespaces: {exc.strerror or exc}")
        else:
            _keep_until_code_ends(libc)
            _fresh_proc(libc, why_not)
            _finish(libc, plan, all_sockets=False)
            return Report("namespaces", ("files", "network", "processes", "unix sockets", "shared memory"),
                          tuple(why_not), lost)
    if "landlock" in plan.mechanisms:
        domain = landlock.Domain(plan.landlock_version)
        if domain.version <= 0:
            why_not.append("landlock: not available in this kernel")
        else:
            try:
                libc.prctl(PR_SET_CHILD_SUBREAPER, 1)
                libc.no_new_privileges()
                landlock.restrict(libc, domain, plan.scratch)
            except OSError as exc:
                why_not.append(f"landlock: {exc.strerror or exc}")
            else:
                _finish(libc, plan, all_sockets=True)
                covers = (*domain.covers(), "sockets", "shared memory", *(() if domain.complete else ("partial",)))
                return Report("landlock", covers, tuple(why_not), lost)
    with contextlib.suppress(OSError):
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1)
    _scrub_environment(plan)
    return Report("none", why_not=tuple(why_not) or ("no OS confinement was allowed",), lost=lost)


def await_end(channel_fd: int, *, grace_s: float = 10.0) -> None:
    """After the result is sent: stay alive until the supervisor kills the tree. A subreaper that exited first
    would hand what the code left running to the kernel's own parent, out of the supervisor's reach."""
    import time

    with contextlib.suppress(OSError):
        os.close(channel_fd)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        time.sleep(0.05)


def _privatise(libc: Libc, why_not: list[str]) -> tuple[str, ...]:
    try:
        return tuple(mappings.privatise(libc))
    except OSError as exc:
        why_not.append(f"shared memory: {exc}")
        return ()


def _namespaces(libc: Libc, plan: Plan) -> None:
    libc.unshare(CLONE_NEWUSER)
    for name, line in (("setgroups", "deny"), ("uid_map", f"{plan.uid} {plan.uid} 1"),
                       ("gid_map", f"{plan.gid} {plan.gid} 1")):
        with open(f"/proc/self/{name}", "w") as file:
            file.write(line)
    libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS)
    libc.mount("none", "/", None, MS_REC | MS_PRIVATE)
    devices = _open_devices()
    libc.read_only_below("/")
    for path in plan.masked:
        libc.mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k")
    libc.mount("tmpfs", plan.scratch, "tmpfs", MS_NOSUID | MS_NODEV, f"size={plan.scratch_mb}m,mode=0700")
    _own_dev(libc, devices)


def _open_devices() -> dict[str, int]:
    return {name: os.open(f"/dev/{name}", os.O_PATH | os.O_CLOEXEC) for name in DEVICES
            if os.path.exists(f"/dev/{name}")}


def _own_dev(libc: Libc, devices: dict[str, int]) -> None:
    """A /dev holding only harmless devices, bound from descriptors opened before it was covered."""
    libc.mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755")
    for name, fd in devices.items():
        target = f"/dev/{name}"
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o666))
        libc.mount(f"/proc/self/fd/{fd}", target, None, MS_BIND)
        os.close(fd)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"/dev/{name}")
    os.mkdir("/dev/shm", 0o1777)


def _keep_until_code_ends(libc: Libc) -> None:
    """Fork the grandchild that runs the code; here, only wait for it and end as it ended."""
    pid = os.fork()
    if pid == 0:
        os.setsid()  # a group of its own: nothing it does to "its group" reaches the process waiting here
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        return
    _wait_and_pass_on(pid)


def _wait_and_pass_on(pid: int) -> NoReturn:
    for fd in (0, 1, 2):
        with contextlib.suppress(OSError):
            os.close(fd)
    status = 0
    try:
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
    finally:
        code = os.waitstatus_to_exitcode(status) if status else 0
        if code < 0:
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code if code >= 0 else 1)


def _fresh_proc(libc: Libc, why_not: list[str]) -> None:
    """/proc of the new PID namespace, read-only (/proc/sys would otherwise take root's writes). Where the kernel
    refuses a new proc (an outer sandbox masks parts of its own), an empty one: the host's must not show."""
    try:
        libc.mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY)
    except OSError as exc:
        libc.mount("tmpfs", "/proc", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k")
        why_not.append(f"a fresh /proc could not be mounted ({exc.strerror}): the code has none")


def _finish(libc: Libc, plan: Plan, *, all_sockets: bool) -> None:
    _scrub_environment(plan)
    libc.no_new_privileges()
    libc.drop_capabilities()
    _filters[all_sockets].install(libc)  # built by `prepare`, in the kernel, before the fork


def _scrub_environment(plan: Plan) -> None:
    for name in plan.secrets:
        os.environ.pop(name, None)
    os.environ["TMPDIR"] = plan.scratch
    tempfile.tempdir = plan.scratch
    if "matplotlib" not in sys.modules:  # its config folder must be writable, or it warns on import
        with contextlib.suppress(OSError):
            os.makedirs(os.path.join(plan.scratch, "matplotlib"), exist_ok=True)
            os.environ["MPLCONFIGDIR"] = os.path.join(plan.scratch, "matplotlib")
