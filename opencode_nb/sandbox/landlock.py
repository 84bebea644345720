"""Landlock: confinement an unprivileged process gives itself, where user namespaces are not to be had.

Ubuntu 23.10 and later restrict unprivileged user namespaces through AppArmor, and some hardened kernels turn
them off; Landlock (Linux 5.13+) needs neither privilege nor namespaces. What a ruleset here handles, by ABI:

- 1+: every way of writing or removing a file, or making one, outside the scratch directory (and writing
  to /dev/null, /dev/zero, /dev/full, which code expects to work). Reading stays open: the point of the
  exploration is to read the person's data.
- 1+, always: `ptrace` of any process outside the domain, which also closes `/proc/<kernel>/mem` and
  `/proc/<kernel>/fd/*`, since the kernel checks those as ptrace.
- 2+: renaming or linking across directories (`REFER`); 3+: truncation.
- 4+: TCP connect and bind, denied outright.
- 6+: signals to processes outside the domain, and abstract Unix sockets.

Below ABI 6 signals are not scoped, so `level` reports the domain as partial and the caller says so.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass

from .linux import Libc

CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

WRITE_FILE, READ_FILE, READ_DIR = 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE = 1 << 4, 1 << 5
MAKE_CHAR, MAKE_DIR, MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = (1 << n for n in range(6, 13))
REFER, TRUNCATE = 1 << 13, 1 << 14
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

WRITES_V1 = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO
             | MAKE_BLOCK | MAKE_SYM)
WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi(libc: Libc) -> int:
    """The Landlock ABI this kernel speaks; 0 when it has none (not built, or not enabled at boot)."""
    result = libc.lib.syscall(libc.arch.syscalls["landlock_create_ruleset"], None, 0, CREATE_RULESET_VERSION)
    return max(int(result), 0)


@dataclass(frozen=True)
class Domain:
    """What a ruleset of this ABI confines, said for the result."""

    version: int

    @property
    def writes(self) -> int:
        return WRITES_V1 | (REFER if self.version >= 2 else 0) | (TRUNCATE if self.version >= 3 else 0)

    @property
    def complete(self) -> bool:
        """Files, TCP, signals and ptrace all confined: ABI 6 or later."""
        return self.version >= 6

    def covers(self) -> list[str]:
        said = ["file writes outside scratch", "ptrace"]
        if self.version >= 4:
            said.append("TCP")
        if self.version >= 6:
            said.append("signals")
        return said


def restrict(libc: Libc, domain: Domain, scratch: str) -> None:
    """Confine this process and all it starts from now on. Needs no_new_privs (set first by the caller)."""
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if domain.version >= 6 else 0
    network = NET_BIND_TCP | NET_CONNECT_TCP if domain.version >= 4 else 0
    attr = _RulesetAttr(domain.writes, network, scoped)
    size = ctypes.sizeof(attr) if domain.version >= 6 else (16 if domain.version >= 4 else 8)
    ruleset = libc.syscall("landlock_create_ruleset", ctypes.byref(attr), size, 0)
    try:
        _allow(libc, ruleset, scratch, domain.writes)
        for device in WRITABLE_DEVICES:
            _allow(libc, ruleset, device, WRITE_FILE | (TRUNCATE if domain.version >= 3 else 0))
        libc.syscall("landlock_restrict_self", ruleset, 0)
    finally:
        os.close(ruleset)


def _allow(libc: Libc, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        rule = _PathBeneath(access, fd)
        libc.syscall("landlock_add_rule", ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0)
    finally:
        os.close(fd)
