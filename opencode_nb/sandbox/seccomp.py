"""A seccomp filter: the system calls a confined process may not make, whatever else confines it.

Namespaces and Landlock decide by what a call touches; a few ways out are calls as such, and this filter
refuses them (EPERM) before the kernel looks further:

- `socket(AF_UNIX, …)`: a Unix socket reaches whatever listens on a path, read-only mount or not (a kernel's
  `ipc` transport, Docker's or D-Bus's socket), and an abstract one needs no path at all. `socketpair`,
  which asyncio uses and which reaches nobody, stays allowed. Where no network namespace stands behind the
  filter (Landlock alone), every `socket()` is refused.
- `io_uring_*`: its operations open, connect and write without passing through the calls filtered here.
- `ptrace`, `process_vm_readv/writev`: another process's memory, even one the namespaces let through.
- `prctl(PR_SET_PDEATHSIG)`: the signal that ends the code when its supervisor dies; clearing it would let
  the code outlive the call.
- `bpf`, `perf_event_open`, `userfaultfd`, the keyring calls: kernel interfaces no data exploration uses,
  and the usual start of an escape.

A call from the other ABI of the machine (32-bit calls on x86-64, or x32's numbering) fails as a whole:
the numbers above would not match it.

The program is built in the kernel before the fork, as bytes, so the child only hands it to `prctl`.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

from .linux import Arch, Libc

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
AF_UNIX = 1

_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15     # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35     # BPF_JMP | BPF_JGE | BPF_K
_RET = 0x06     # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_NR, _ARCH, _ARG0 = 0, 4, 16
"""Offsets in `struct seccomp_data`: the call's number, the ABI, the low half of the first argument."""
_X32_BIT = 0x40000000

REFUSED = ("io_uring_setup", "io_uring_enter", "io_uring_register", "ptrace", "process_vm_readv",
           "process_vm_writev", "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key")


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: Arch, *, all_sockets: bool) -> bytes:
    """The filter's instructions. `all_sockets` refuses every `socket()`, not only Unix ones."""
    deny = _op(_RET, _ERRNO | errno.EPERM)
    ops = [_op(_LD_ABS, _ARCH), _op(_JEQ, machine.audit, 1, 0), _op(_RET, _ERRNO | errno.ENOSYS),
           _op(_LD_ABS, _NR)]
    if machine.audit == 0xC000003E:
        ops += [_op(_JGE, _X32_BIT, 0, 1), _op(_RET, _ERRNO | errno.ENOSYS)]
    for name in REFUSED:
        ops += [_op(_JEQ, machine.syscalls[name], 0, 1), deny]
    if all_sockets:
        ops += [_op(_JEQ, machine.syscalls["socket"], 0, 1), deny]
    else:
        ops += [_op(_JEQ, machine.syscalls["socket"], 0, 4), _op(_LD_ABS, _ARG0), _op(_JEQ, AF_UNIX, 0, 1), deny,
                _op(_RET, _ALLOW), _op(_LD_ABS, _NR)]
    ops += [_op(_JEQ, machine.syscalls["prctl"], 0, 4), _op(_LD_ABS, _ARG0), _op(_JEQ, 1, 0, 1), deny,  # PDEATHSIG
            _op(_RET, _ALLOW)]
    ops.append(_op(_RET, _ALLOW))
    return b"".join(ops)


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class Filter:
    """A built program, kept alive in memory until `install` hands it to the kernel."""

    def __init__(self, machine: Arch, *, all_sockets: bool) -> None:
        code = program(machine, all_sockets=all_sockets)
        self.buffer = ctypes.create_string_buffer(code, len(code))
        self.fprog = _Program(len(code) // 8, ctypes.cast(self.buffer, ctypes.c_void_p))
        self.all_sockets = all_sockets

    def install(self, libc: Libc) -> None:
        """From now on, for this process and every process it starts. Needs no_new_privs (or CAP_SYS_ADMIN)."""
        result = libc.lib.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(self.fprog), 0, 0)
        if result != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"seccomp filter: {os.strerror(code)}")


def program_descriptor(machine: Arch, *, all_sockets: bool) -> int:
    """The program in a sealed memfd, positioned at its start: what `bwrap --seccomp FD` reads. The caller
    passes it to the sandbox and closes it after the spawn."""
    code = program(machine, all_sockets=all_sockets)
    fd = os.memfd_create("opencode-nb-seccomp", 0)  # inheritable: bwrap reads it by number
    os.write(fd, code)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
