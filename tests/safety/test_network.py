"""The network by rule, host by host: checked by effect, with real bubblewrap and real servers.

Each case is a bash call made by a scripted model through a real workspace under `{"*": allow}`. Loopback HTTP
servers on 127.0.0.2 and 127.0.0.3 stand in for hosts on the internet; since the proxy refuses loopback
addresses unless a rule names the host exactly, the rules here name them exactly. What must not happen is
looked for at the servers: a refused host's server saw no request at all. Where the sandbox is what holds,
the same attack is run with `sandbox: off` and must succeed there.
"""

from __future__ import annotations

import http.server
import socket
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from .test_sandbox import Run

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux-only")


class Host:
    """An HTTP server on one loopback address, noting every request and every connection."""

    def __init__(self, address: str) -> None:
        self.requests: list[str] = []
        self.connections = 0
        seen = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def setup(self) -> None:
                seen.connections += 1
                super().setup()

            def do_GET(self) -> None:
                seen.requests.append(self.path)
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"reached " + address.encode())

            def log_message(self, *args: Any) -> None:
                return None

        self.server = http.server.ThreadingHTTPServer((address, 0), Handler)
        self.address = address
        self.port = self.server.server_address[1]
        self.url = f"http://{address}:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve(address: str) -> Iterator[Host]:
    try:
        made = Host(address)
    except OSError as exc:
        pytest.skip(f"cannot listen on {address}: {exc}")
    yield made
    made.close()


@pytest.fixture
def allowed() -> Iterator[Host]:
    yield from serve("127.0.0.2")


@pytest.fixture
def other() -> Iterator[Host]:
    yield from serve("127.0.0.3")


def workspace(tmp_path: Any, network: Any, *, sandbox: str = "auto", on_ask: Any = None) -> Run:
    return Run(tmp_path, {"permission": {"*": "allow", "network": network}, "sandbox": sandbox}, on_ask=on_ask)


CURL = "curl -sS -m 5 {url}/curl"
URLLIB = "python3 -c \"import urllib.request as u; print(u.urlopen('{url}/urllib', timeout=5).read().decode())\""
HTTPS = "curl -sS -m 5 -k https://{host}:{port}/tls"


# ---------------------------------------------------------------------------------------------- allowed hosts


@pytest.mark.parametrize("reads", ["anywhere", "project-only"])
@pytest.mark.parametrize("client", [CURL, URLLIB], ids=["curl", "urllib"])
async def test_an_allowed_host_is_reached_through_the_proxy(bwrap, tmp_path, allowed, other, client, reads):
    made = workspace(tmp_path, {"127.0.0.2": "allow"})
    if reads == "project-only":  # the sandbox then shows little of the machine: the relay must still run
        made.ws.close()
        made = Run(tmp_path, {"permission": {"*": "allow", "external_directory": "deny",
                                             "network": {"127.0.0.2": "allow"}}})
    try:
        state = await made.bash(client.format(url=allowed.url) + "; " + client.format(url=other.url))
    finally:
        made.ws.close()
    assert state.metadata["sandbox"] == "bwrap+network"
    assert "reached 127.0.0.2" in state.output and len(allowed.requests) == 1
    assert other.requests == [] and other.connections == 0
    assert f"127.0.0.3:{other.port} (no `network` rule allows it)" in state.output
    assert 'network: {"pypi.org": allow}' in state.output


async def test_a_tunnel_is_made_only_to_an_allowed_host(bwrap, tmp_path, allowed, other):
    # CONNECT, as HTTPS clients do: the test servers speak no TLS, so a tunnel shows as a TLS failure after
    # the server saw a connection, a refusal as curl's "CONNECT tunnel failed, response 403".
    made = workspace(tmp_path, {"127.0.0.2": "allow", "127.0.0.3": "deny"})
    try:
        state = await made.bash(HTTPS.format(host="127.0.0.2", port=allowed.port) + "; "
                                + HTTPS.format(host="127.0.0.3", port=other.port))
    finally:
        made.ws.close()
    assert allowed.connections == 1 and other.connections == 0
    assert "response 403" in state.output
    assert f"127.0.0.3:{other.port} (a `network` rule denies it)" in state.output


async def test_a_port_in_the_pattern_allows_that_port_only(bwrap, tmp_path, allowed):
    made = workspace(tmp_path, {"127.0.0.2:1": "allow"})
    try:
        state = await made.bash(CURL.format(url=allowed.url))
    finally:
        made.ws.close()
    assert allowed.requests == [] and f"refused 127.0.0.2:{allowed.port}" in state.output


# ---------------------------------------------------------------------------------------------- refused hosts


@pytest.mark.parametrize("network", ["deny", {"*": "allow"}, {"127.0.0.*": "allow"}, {"curl *": "allow"}],
                         ids=["deny", "every-host", "wildcard", "command-pattern"])
async def test_a_loopback_host_is_refused_unless_a_rule_names_it_exactly(bwrap, tmp_path, allowed, network):
    made = workspace(tmp_path, network)
    try:
        state = await made.bash(CURL.format(url=allowed.url))
    finally:
        made.ws.close()
    assert allowed.requests == [] and allowed.connections == 0
    assert "reached" not in state.output


async def test_a_name_resolving_to_loopback_is_refused_unless_named(bwrap, tmp_path):
    host = Host("127.0.0.1")
    command = f"curl -sS -m 5 http://localhost:{host.port}/by-name"
    try:
        made = workspace(tmp_path / "a", "allow")
        try:
            refused = await made.bash(command)
        finally:
            made.ws.close()
        assert host.requests == [] and "resolves to" in refused.output and "localhost" in refused.output
        made = workspace(tmp_path / "b", {"localhost": "allow"})
        try:
            await made.bash(command)
        finally:
            made.ws.close()
        assert host.requests == ["/by-name"]
    finally:
        host.close()


async def test_an_asked_host_with_nobody_present_is_refused(bwrap, tmp_path, allowed):
    made = workspace(tmp_path, {"127.0.0.2": "ask"})
    try:
        state = await made.bash(CURL.format(url=allowed.url))
    finally:
        made.ws.close()
    assert allowed.requests == [] and allowed.connections == 0
    assert "nobody was present to allow it" in state.output


async def test_an_asked_host_waits_for_the_person_and_always_grants_it(bwrap, tmp_path, allowed):
    asked: list[Any] = []

    def person(request: Any) -> str:
        asked.append(request)
        return "always"

    made = workspace(tmp_path, {"127.0.0.2": "ask"}, on_ask=person)
    try:
        first = await made.bash(CURL.format(url=allowed.url) + "; " + CURL.format(url=allowed.url))
        second = await made.bash(CURL.format(url=allowed.url))
    finally:
        made.ws.close()
    assert [(r.permission, r.patterns, r.metadata["port"]) for r in asked] == [("network", ["127.0.0.2"],
                                                                                allowed.port)]
    assert allowed.requests == ["/curl"] * 3
    assert first.output.count("reached") == 2 and "reached" in second.output


async def test_a_refusing_person_is_quoted_in_the_result(bwrap, tmp_path, allowed):
    made = workspace(tmp_path, {"127.0.0.2": "ask"}, on_ask=lambda request: "reject")
    try:
        state = await made.bash(CURL.format(url=allowed.url))
    finally:
        made.ws.close()
    assert allowed.requests == [] and "the person refused it" in state.output


# ---------------------------------------------------------------------------------------------- around the proxy


DIRECT = ("python3 -c \"import socket; s = socket.create_connection(('{host}', {port}), timeout=3); "
          "s.sendall(b'GET /direct HTTP/1.0\\r\\n\\r\\n'); print(s.makefile('rb').read().decode())\"")
IGNORING = ("curl -sS -m 3 --noproxy '*' {url}/ignoring; "
            "env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy curl -sS -m 3 {url}/unset")


@pytest.mark.parametrize("sandbox", ["auto", "off"])
@pytest.mark.parametrize("attack", [DIRECT, IGNORING], ids=["direct-tcp", "ignoring-the-proxy"])
async def test_a_connection_that_bypasses_the_proxy_has_no_route(tmp_path, allowed, sandbox, attack, request):
    if sandbox == "auto":
        request.getfixturevalue("bwrap")
    made = workspace(tmp_path, {"127.0.0.2": "allow"}, sandbox=sandbox)
    try:
        state = await made.bash(attack.format(host=allowed.address, port=allowed.port, url=allowed.url))
    finally:
        made.ws.close()
    if sandbox == "off":  # the attack itself works
        assert allowed.requests and "reached" in state.output
        return
    assert allowed.requests == [] and allowed.connections == 0
    assert "reached" not in state.output


@pytest.fixture
def udp() -> Iterator[tuple[int, list[bytes]]]:
    """A UDP socket on 127.0.0.2 standing in for a DNS server, noting every datagram."""
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.2", 0))
    server.settimeout(0.1)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                received.append(server.recv(512))
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], received
    stop.set()
    thread.join()
    server.close()


@pytest.mark.parametrize("sandbox", ["auto", "off"])
async def test_udp_such_as_dns_has_no_route(tmp_path, udp, sandbox, request):
    if sandbox == "auto":
        request.getfixturevalue("bwrap")
    port, received = udp
    made = workspace(tmp_path, {"127.0.0.2": "allow"}, sandbox=sandbox)
    try:
        state = await made.bash(f"python3 -c \"import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                                f"s.sendto(b'secret.example? A', ('127.0.0.2', {port})); print('sent')\"; sleep 0.3")
    finally:
        made.ws.close()
    assert "sent" in state.output
    assert (received == []) is (sandbox == "auto")


UNIX = ("python3 -c \"import socket, pathlib; path = pathlib.Path('/proc/' + str({pid}) + '/cmdline')"
        ".read_bytes().split(bytes(1))[4].decode(); print('proxy at', path); s = socket.socket(socket.AF_UNIX); "
        "s.connect(path); s.sendall(b'CONNECT 127.0.0.3:{port} HTTP/1.1\\r\\n\\r\\n'); print(s.recv(200))\"")


async def test_the_command_cannot_reach_the_proxys_socket_itself(bwrap, tmp_path, allowed, other):
    made = workspace(tmp_path, {"127.0.0.2": "allow"})
    try:
        state = await made.bash(UNIX.format(pid="$PPID", port=other.port))
    finally:
        made.ws.close()
    assert "proxy at /" in state.output and "proxy.sock" in state.output  # it found the socket
    assert "Operation not permitted" in state.output
    assert other.connections == 0


TAKE_FDS = """python3 - <<'EOF'
import ctypes, errno, os, pathlib, subprocess
libc = ctypes.CDLL(None, use_errno=True)
def take(pid):
    pidfd = os.pidfd_open(pid)
    taken = [libc.syscall(438, pidfd, n, 0) for n in range(0, 12)]  # pidfd_getfd
    return sum(1 for t in taken if t >= 0), errno.errorcode.get(ctypes.get_errno())
def relay():
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit() and (entry / "comm").read_text().startswith("python") and \\
                b"relay.py" in (entry / "cmdline").read_bytes():
            return int(entry.name)
sibling = subprocess.Popen(["sleep", "5"], stdin=subprocess.DEVNULL)
found = relay()
print("sibling", take(sibling.pid))
print("relay", take(found))
for what in ("fd/3", "environ", "mem"):
    try:
        print(what, len(open("/proc/%d/%s" % (found, what), "rb").read(10)))
    except OSError as exc:
        print(what, errno.errorcode[exc.errno])
sibling.kill()
EOF"""


async def test_the_relays_descriptors_and_memory_cannot_be_taken(bwrap, tmp_path, allowed):
    made = workspace(tmp_path, {"127.0.0.2": "allow"})
    try:
        state = await made.bash(TAKE_FDS)
    finally:
        made.ws.close()
    output = state.output
    assert "sibling (" in output and not output.split("sibling (")[1].startswith("0,")  # the attack works
    assert "relay (0, 'EPERM')" in output
    for what in ("fd/3", "environ", "mem"):
        assert f"{what} EACCES" in output or f"{what} EPERM" in output, output


# ---------------------------------------------------------------------------------------------- the rules


async def test_a_command_pattern_opens_the_proxy_for_matching_commands_only(bwrap, tmp_path, allowed):
    made = workspace(tmp_path, {"*": "deny", "curl -sS *": "allow"})
    try:
        matching = await made.bash(CURL.format(url=allowed.url))
        other = await made.bash(URLLIB.format(url=allowed.url))
    finally:
        made.ws.close()
    assert matching.metadata["sandbox"] == "bwrap+network" and other.metadata["sandbox"] == "bwrap"
    assert "resolves to" not in matching.output and "loopback" in matching.output  # the proxy judged it
    assert allowed.requests == []


async def test_no_network_rule_means_no_proxy_at_all(bwrap, tmp_path, allowed):
    made = Run(tmp_path)
    try:
        state = await made.bash("echo \"[$HTTPS_PROXY]\"; " + CURL.format(url=allowed.url))
    finally:
        made.ws.close()
    assert state.metadata["sandbox"] == "bwrap" and "[]" in state.output
    assert allowed.requests == [] and "no `network` rule allows any host" in state.output


def test_a_server_on_another_loopback_address_is_not_this_one(allowed):
    """The test hosts are told apart by address: a request to 127.0.0.3 must not reach 127.0.0.2."""
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.3", allowed.port), timeout=1).close()
