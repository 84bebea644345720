"""The few Linux system calls confinement needs that Python's `os` module does not offer, through libc.

Everything here is looked up once, in the kernel, before any fork: a forked child then calls prepared
functions and allocates next to nothing before the code it guards runs. Each call raises OSError with the
errno and a word of context, so a confinement step that fails says which step and why.
"""

from __future__ import annotations

import ctypes
import os
import platform
from dataclasses import dataclass
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000

MOUNT_ATTR_RDONLY = 0x1
AT_FDCWD = -100
AT_RECURSIVE = 0x8000

PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
LOCKED_NO_ROOT = 0xEF
"""Securebits: root's uid grants no capabilities on exec, setuid changes none, ambient ones cannot be raised,
and all of it is locked."""
CAPABILITY_VERSION_3 = 0x20080522

PROT_READ, PROT_WRITE, PROT_EXEC = 1, 2, 4
MAP_PRIVATE, MAP_FIXED, MAP_ANONYMOUS = 0x02, 0x10, 0x20


@dataclass(frozen=True)
class Arch:
    """What differs between the two architectures we confine on: seccomp's arch tag and syscall numbers."""

    audit: int
    syscalls: dict[str, int]


_GENERIC = {"mount_setattr": 442, "landlock_create_ruleset": 444, "landlock_add_rule": 445,
            "landlock_restrict_self": 446, "io_uring_setup": 425, "io_uring_enter": 426,
            "io_uring_register": 427}
ARCHES = {
    "x86_64": Arch(0xC000003E, {**_GENERIC, "socket": 41, "ptrace": 101, "prctl": 157, "capset": 126,
                                 "process_vm_writev": 311, "process_vm_readv": 310, "keyctl": 250, "add_key": 248,
                                 "request_key": 249, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323}),
    "aarch64": Arch(0xC00000B7, {**_GENERIC, "socket": 198, "ptrace": 117, "prctl": 167, "capset": 91,
                                  "process_vm_writev": 271, "process_vm_readv": 270, "keyctl": 219, "add_key": 217,
                                  "request_key": 218, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282}),
}


def arch() -> Arch | None:
    """This machine's architecture, when it is one we know the numbers of."""
    machine = platform.machine().lower()
    return ARCHES.get({"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine))


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64), ("propagation", ctypes.c_uint64),
                ("userns_fd", ctypes.c_uint64)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


class Libc:
    """libc's calls, typed once. Only on Linux (`load` says None elsewhere)."""

    def __init__(self, lib: Any, machine: Arch) -> None:
        self.lib = lib
        self.arch = machine
        self.lib.mmap.restype = ctypes.c_void_p
        self.lib.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                  ctypes.c_long]
        self.lib.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self.lib.syscall.restype = ctypes.c_long
        self.lib.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]

    def _check(self, result: int, what: str) -> int:
        if result == -1:
            errno = ctypes.get_errno()
            raise OSError(errno, f"{what}: {os.strerror(errno)}")
        return result

    def unshare(self, flags: int) -> None:
        self._check(self.lib.unshare(flags), "unshare")

    def mount(self, source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
        self._check(self.lib.mount(source.encode(), target.encode(), fstype.encode() if fstype else None,
                                   ctypes.c_ulong(flags), data.encode() if data else None), f"mount {target}")

    def read_only_below(self, path: str) -> None:
        """Every mount at and below `path` read-only, in one call (Linux 5.12+)."""
        attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
        self._check(self.lib.syscall(self.arch.syscalls["mount_setattr"], AT_FDCWD, path.encode(), AT_RECURSIVE,
                                     ctypes.byref(attr), ctypes.sizeof(attr)), f"mount_setattr {path}")

    def prctl(self, option: int, arg: int = 0, arg3: int = 0) -> int:
        return self._check(self.lib.prctl(option, arg, arg3, 0, 0), f"prctl {option}")

    def drop_capabilities(self) -> None:
        """No capability now or after any exec: the bounding set emptied (where we may), securebits locked,
        the ambient set cleared, then the effective, permitted and inheritable sets zeroed."""
        last = _last_capability()
        for capability in range(last + 1):
            if self.lib.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                break  # not ours to drop (no CAP_SETPCAP): an unprivileged process has none to keep
        self.lib.prctl(PR_SET_SECUREBITS, LOCKED_NO_ROOT, 0, 0, 0)
        self.lib.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        header = _CapHeader(CAPABILITY_VERSION_3, 0)
        data = (_CapData * 2)()
        self._check(self.lib.syscall(self.arch.syscalls["capset"], ctypes.byref(header), ctypes.byref(data)),
                    "capset")

    def no_new_privileges(self) -> None:
        self.prctl(PR_SET_NO_NEW_PRIVS, 1)

    def mmap(self, address: int, length: int, prot: int, flags: int, fd: int, offset: int) -> None:
        result = self.lib.mmap(ctypes.c_void_p(address), length, prot, flags, fd, offset)
        if result is None or result == ctypes.c_void_p(-1).value or result != address:
            errno = ctypes.get_errno()
            raise OSError(errno, f"mmap at {address:#x}: {os.strerror(errno)}")

    def munmap(self, address: int, length: int) -> None:
        self._check(self.lib.munmap(ctypes.c_void_p(address), length), f"munmap at {address:#x}")

    def syscall(self, name: str, *args: Any) -> int:
        return self._check(self.lib.syscall(self.arch.syscalls[name], *args), name)


def _last_capability() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as file:
            return int(file.read())
    except (OSError, ValueError):
        return 40


_loaded: list[Libc | None] = []


def load() -> Libc | None:
    """libc, prepared; None off Linux or on an architecture whose numbers we do not know."""
    if not _loaded:
        machine = arch()
        lib = None
        if os.uname().sysname == "Linux" and machine is not None:
            try:
                lib = Libc(ctypes.CDLL(None, use_errno=True), machine)
            except (OSError, AttributeError):
                lib = None
        _loaded.append(lib)
    return _loaded[0]
