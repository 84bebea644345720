"""The relay inside a sandbox's network namespace: the loopback port through which a command reaches the proxy.

A confined command runs under a seccomp filter that refuses `socket(AF_UNIX)`, and its network namespace has
only a loopback, so it can open nothing but TCP connections to that loopback. Something inside must listen
there and carry each connection to the proxy's Unix socket (bound into the sandbox): this relay. It is the
one process in the sandbox that may make a Unix socket, so:

- it starts the command itself, as its child, and installs the filter in that child just before the exec
  (the filter program is built outside by `seccomp.program_descriptor` and handed over as a descriptor):
  the command and everything it starts run filtered, the relay does not;
- it makes itself undumpable (`PR_SET_DUMPABLE` 0) before anything else happens: the command runs as the
  same user, and /proc would otherwise hand it the relay's descriptors (`/proc/PID/fd/N`), its memory, or
  a ptrace. Undumpable, all of those need CAP_SYS_PTRACE, which no sandboxed process has;
- it listens on 127.0.0.1 at a port of its choosing before the fork, so nothing in the sandbox can take the
  port first, and gives the command `HTTP_PROXY` and its kin pointing there (`NO_PROXY` emptied, so that
  even a loopback URL goes through the proxy, which decides about it);
- its exit status is the command's (a signal N as 128+N, as shells report it), and it exits when the
  command does: bwrap then ends the namespace, and every connection and background job with it.

It runs as a script (`python -I -S relay.py ...`) and imports only the standard library: inside the sandbox
it cannot count on finding the package or the environment that started it. It uses `_socket` and `_thread`
rather than `socket` and `threading`, whose imports (enum, selectors) would double the ~25 ms every
networked command waits for it to start.
"""

from __future__ import annotations

import _socket
import _thread
import ctypes
import os
import sys
from collections.abc import Sequence

PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
CHUNK = 65536
REFUSED_EXIT = 126
"""The command was not run: the filter could not be installed, or the program not started."""

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
NO_PROXY_VARIABLES = ("NO_PROXY", "no_proxy")


def relay_argv(python: str, socket_path: os.PathLike[str] | str, filter_fd: int, argv: Sequence[str]) -> list[str]:
    """The command line that runs `argv` behind the relay (inside the sandbox; `filter_fd` passed to it)."""
    return [python, "-I", "-S", os.path.realpath(__file__), os.fspath(socket_path), str(filter_fd), "--", *argv]


def proxy_env(port: int) -> dict[str, str]:
    """What tells HTTP clients (curl, pip, git, urllib, npm) to go through the relay."""
    url = f"http://127.0.0.1:{port}"
    return {**dict.fromkeys(PROXY_VARIABLES, url), **dict.fromkeys(NO_PROXY_VARIABLES, "")}


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _install_filter(libc: ctypes.CDLL, code: bytes) -> None:
    buffer = ctypes.create_string_buffer(code, len(code))
    program = _Program(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "no_new_privs")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.c_void_p(ctypes.addressof(program)), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")


def _start(command: list[str], code: bytes, port: int, libc: ctypes.CDLL) -> None:
    """In the forked child: filtered, then the command. Never returns; never runs the command unfiltered."""
    try:
        _install_filter(libc, code)
        os.execvpe(command[0], command, {**os.environ, **proxy_env(port)})
    except OSError as exc:
        os.write(2, f"sandbox relay: could not start {command[0]}: {os.strerror(exc.errno or 0)} "
                    f"({exc.args[-1]})\n".encode())
    os._exit(REFUSED_EXIT)


def _copy(source: _socket.socket, sink: _socket.socket, done: _thread.LockType | None = None) -> None:
    try:
        while data := source.recv(CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    try:
        sink.shutdown(_socket.SHUT_WR)
    except OSError:
        return
    finally:
        if done is not None:
            done.release()


def _carry(client: _socket.socket, proxy_path: str) -> None:
    upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        upstream.connect(proxy_path)
        back = _thread.allocate_lock()
        back.acquire()
        _thread.start_new_thread(_copy, (upstream, client, back))
        _copy(client, upstream)
        back.acquire()  # the other direction is done too
    except OSError:
        return
    finally:
        upstream.close()
        client.close()


def _accept(listener: _socket.socket, proxy_path: str) -> None:
    while True:
        try:
            # `_socket.socket` has no `accept` (that is `socket.socket`'s): `_accept` is its own, returning the
            # bare descriptor; typeshed leaves it out of the stub.
            fd, _ = listener._accept()  # type: ignore[attr-defined]
        except OSError:
            continue
        _thread.start_new_thread(_carry, (_socket.socket(fileno=fd), proxy_path))


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def main(argv: Sequence[str]) -> None:
    """`relay.py SOCKET FILTER_FD -- COMMAND...`: run COMMAND filtered, relaying 127.0.0.1:PORT to SOCKET."""
    if len(argv) < 4 or argv[2] != "--" or not argv[1].isdigit():
        os.write(2, b"usage: relay.py SOCKET FILTER_FD -- COMMAND...\n")
        os._exit(2)
    proxy_path, filter_fd, command = argv[0], int(argv[1]), list(argv[3:])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(PR_SET_DUMPABLE, 0, None, 0, 0) != 0:
        os.write(2, b"sandbox relay: could not make itself undumpable; the command was not run\n")
        os._exit(REFUSED_EXIT)
    with os.fdopen(filter_fd, "rb") as program:
        code = program.read()
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    sys.stdout.flush()
    child = os.fork()
    if child == 0:
        listener.close()
        _start(command, code, port, libc)
    _thread.start_new_thread(_accept, (listener, proxy_path))
    _, status = os.waitpid(child, 0)
    os._exit(_exit_code(status))


if __name__ == "__main__":
    main(sys.argv[1:])
