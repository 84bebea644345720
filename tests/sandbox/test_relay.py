"""The relay run as it runs in the sandbox (`python -I -S relay.py SOCKET FD -- COMMAND`), here without bwrap:
it starts the command filtered, hands the command's proxy connections to the Unix socket, and exits as the
command did. That nothing in the sandbox can take its descriptors is tried in tests/safety/test_network.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from opencode_nb.sandbox.linux import arch
from opencode_nb.sandbox.relay import PROXY_VARIABLES, REFUSED_EXIT, relay_argv
from opencode_nb.sandbox.seccomp import program_descriptor

pytestmark = pytest.mark.skipif(arch() is None or not sys.platform.startswith("linux"),
                                reason="the relay's filter needs Linux on x86-64 or arm64")


@pytest.fixture
def proxy_socket(tmp_path: Path) -> Iterator[tuple[Path, list[bytes]]]:
    """A Unix socket standing in for the proxy: records what arrives and answers a 200."""
    path = tmp_path / "proxy.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    received: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            with client:
                received.append(client.recv(4096))
                client.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nproxied")

    threading.Thread(target=serve, daemon=True).start()
    yield path, received
    server.close()


def relay(socket_path: Path, command: str, program: bytes | None = None) -> subprocess.CompletedProcess[str]:
    if program is None:
        machine = arch()
        assert machine is not None
        fd = program_descriptor(machine, all_sockets=False)
    else:
        fd = os.memfd_create("test-program", 0)
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
    try:
        return subprocess.run(relay_argv(sys.executable, socket_path, fd, ["bash", "-c", command]), pass_fds=(fd,),
                              capture_output=True, text=True, timeout=30)
    finally:
        os.close(fd)


def test_the_command_reaches_the_proxy_socket_through_the_variables_it_is_given(proxy_socket):
    path, received = proxy_socket
    done = relay(path, "env | sort; curl -sS -m 5 http://pypi.example/simple/")
    assert done.returncode == 0, done.stderr
    port = done.stdout.split("HTTP_PROXY=http://127.0.0.1:")[1].split()[0]
    assert all(f"{name}=http://127.0.0.1:{port}\n" in done.stdout for name in PROXY_VARIABLES)
    assert "NO_PROXY=\n" in done.stdout and "no_proxy=\n" in done.stdout
    assert done.stdout.rstrip().endswith("proxied")
    assert received[0].startswith(b"GET http://pypi.example/simple/ HTTP/1.1\r\n")


def test_the_command_runs_under_the_filter_and_cannot_make_a_unix_socket(proxy_socket):
    path, received = proxy_socket
    done = relay(path, f"python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('{path}')\"")
    assert "Operation not permitted" in done.stderr and done.returncode == 1
    assert received == []


@pytest.mark.parametrize(("command", "code"), [("exit 7", 7), ("kill -9 $$", 128 + 9), ("true", 0)])
def test_the_relay_exits_as_the_command_did(proxy_socket, command, code):
    assert relay(proxy_socket[0], command).returncode == code


def test_a_filter_that_cannot_be_installed_means_the_command_does_not_run(proxy_socket, tmp_path):
    marker = tmp_path / "ran"
    done = relay(proxy_socket[0], f"touch {marker}", program=b"\x00" * 3)
    assert done.returncode == REFUSED_EXIT and not marker.exists()
    assert "could not start bash" in done.stderr and "seccomp" in done.stderr


def test_a_relay_called_wrongly_says_how_to_call_it():
    done = subprocess.run([sys.executable, "-I", "-S", relay_argv("", Path("x"), 0, [])[3], "only-one"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "usage: relay.py SOCKET FILTER_FD -- COMMAND" in done.stderr
