"""The seccomp filter refuses the calls that lead out, and only those: each one tried for real in a filtered
child process."""

from __future__ import annotations

import ctypes
import errno
import os
import socket
import subprocess

import pytest

from opencode_nb.sandbox.linux import PR_SET_PDEATHSIG, load
from opencode_nb.sandbox.seccomp import Filter

from .forked import in_child

libc = load()
pytestmark = pytest.mark.skipif(libc is None, reason="seccomp needs Linux on x86-64 or arm64")


def filtered(all_sockets: bool, attempt) -> object:
    def run() -> object:
        assert libc is not None
        libc.no_new_privileges()
        Filter(libc.arch, all_sockets=all_sockets).install(libc)
        return attempt()
    return in_child(run)


def errno_of(call) -> int:
    try:
        call()
    except OSError as exc:
        return exc.errno or -1
    return 0


def test_a_unix_socket_cannot_be_made_but_a_socketpair_and_an_inet_socket_can(tmp_path):
    def attempt() -> list[int]:
        return [errno_of(lambda: socket.socket(socket.AF_UNIX)), errno_of(socket.socketpair),
                errno_of(lambda: socket.socket(socket.AF_INET).close())]
    assert filtered(False, attempt) == [errno.EPERM, 0, 0]


def test_with_all_sockets_refused_inet_sockets_fail_too_and_asyncio_still_runs():
    def attempt() -> list[object]:
        import asyncio

        async def hello() -> str:
            return "ran"
        return [errno_of(lambda: socket.socket(socket.AF_INET)), asyncio.run(hello())]
    assert filtered(True, attempt) == [errno.EPERM, "ran"]


def test_every_call_in_the_refused_table_fails_with_eperm_before_its_arguments_are_looked_at():
    from opencode_nb.sandbox.seccomp import REFUSED

    def attempt() -> dict[str, int]:
        assert libc is not None
        said = {}
        for name in REFUSED:
            ctypes.set_errno(0)
            result = libc.lib.syscall(libc.arch.syscalls[name], 0, 0, 0, 0, 0)
            said[name] = ctypes.get_errno() if result == -1 else 0
        return said
    assert filtered(False, attempt) == dict.fromkeys(REFUSED, errno.EPERM)


def test_ptrace_io_uring_and_clearing_the_death_signal_are_refused():
    def attempt() -> list[int]:
        assert libc is not None
        out = []
        for name, args in (("ptrace", (16, os.getppid(), 0, 0)), ("io_uring_setup", (8, None))):
            ctypes.set_errno(0)
            result = libc.lib.syscall(libc.arch.syscalls[name], *args)
            out.append(ctypes.get_errno() if result == -1 else 0)
        result = libc.lib.prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0)
        out.append(ctypes.get_errno() if result == -1 else 0)
        return out
    assert filtered(False, attempt) == [errno.EPERM] * 3


def test_ordinary_work_goes_on_under_the_filter(tmp_path):
    def attempt() -> list[object]:
        path = tmp_path / "f.txt"
        path.write_text("x")
        done = subprocess.run(["echo", "child"], capture_output=True, text=True, check=True)
        return [path.read_text(), done.stdout.strip()]
    assert filtered(False, attempt) == ["x", "child"]
