"""The proxy outside the sandbox, spoken to directly over its Unix socket, with loopback servers as the hosts.

What a confined command sends through the relay arrives here byte for byte, so these are the proxy's whole
behaviour: what it passes on, to whom, what it refuses, and that it decides each host once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from opencode_nb.sandbox.proxy import HEAD_LIMIT, HostProxy, Verdict, is_public, split_authority


class Upstream:
    """A TCP server on 127.0.0.2 that records and echoes what it gets."""

    def __init__(self) -> None:
        self.received: list[bytes] = []
        self.connections = 0
        self.server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._echo, "127.0.0.2", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _echo(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Echoes until the client closes its side, or goes quiet (an HTTP client waiting for its answer)."""
        self.connections += 1
        while True:
            try:
                data = await asyncio.wait_for(reader.read(65536), 0.3)
            except TimeoutError:
                break
            if not data:
                break
            self.received.append(data)
            writer.write(b"echo:" + data)
            await writer.drain()
        writer.close()


@pytest.fixture
async def upstream() -> AsyncIterator[Upstream]:
    made = Upstream()
    try:
        await made.start()
    except OSError as exc:
        pytest.skip(f"cannot listen on 127.0.0.2: {exc}")
    yield made
    assert made.server is not None
    made.server.close()


def deciding(verdicts: dict[str, Verdict], calls: list[tuple[str, int]] | None = None, delay_s: float = 0.0):
    async def decide(host: str, port: int) -> Verdict:
        if calls is not None:
            calls.append((host, port))
        await asyncio.sleep(delay_s)
        return verdicts.get(host, Verdict(False, "no rule allows it"))
    return decide


async def exchange(path: Path, request: bytes, then: bytes = b"") -> bytes:
    """Send `request` (and `then` after the proxy's answer to a CONNECT); everything read until the end."""
    reader, writer = await asyncio.open_unix_connection(str(path))
    writer.write(request)
    await writer.drain()
    answer = b""
    if then:
        answer = await reader.readuntil(b"\r\n\r\n")
        writer.write(then)
        await writer.drain()
    writer.write_eof()
    answer += await asyncio.wait_for(reader.read(), 5)
    writer.close()
    return answer


NAMED = Verdict(True, named=True)


async def test_connect_to_an_allowed_host_is_a_tunnel_both_ways(upstream):
    proxy = HostProxy(deciding({"127.0.0.2": NAMED}))
    async with proxy.serving() as path:
        answer = await exchange(path, f"CONNECT 127.0.0.2:{upstream.port} HTTP/1.1\r\n\r\n".encode(), b"hello")
    assert answer == b"HTTP/1.1 200 Connection established\r\n\r\necho:hello"
    assert proxy.reached == [f"127.0.0.2:{upstream.port}"] and proxy.refused == {}


async def test_an_absolute_uri_is_passed_on_in_origin_form_without_the_proxys_headers(upstream):
    proxy = HostProxy(deciding({"127.0.0.2": NAMED}))
    request = (f"GET http://127.0.0.2:{upstream.port}/x?y=1 HTTP/1.1\r\nHost: 127.0.0.2\r\n"
               "Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n")
    async with proxy.serving() as path:
        answer = await exchange(path, request.encode())
    head = b"".join(upstream.received).decode()
    assert head == (f"GET /x?y=1 HTTP/1.1\r\nHost: 127.0.0.2:{upstream.port}\r\nAccept: */*\r\n"
                    "Connection: close\r\n\r\n")
    assert answer.startswith(b"echo:GET /x?y=1")


async def test_only_the_one_request_and_its_counted_body_reach_the_host_whatever_follows(upstream):
    proxy = HostProxy(deciding({"127.0.0.2": NAMED}))
    request = (f"POST http://127.0.0.2:{upstream.port}/upload HTTP/1.1\r\nHost: cdn-neighbour.example\r\n"
               "Content-Length: 5\r\n\r\nhello"
               "GET /second HTTP/1.1\r\nHost: cdn-neighbour.example\r\n\r\n")
    async with proxy.serving() as path:
        await exchange(path, request.encode())
    sent = b"".join(upstream.received).decode()
    assert sent.endswith("\r\n\r\nhello") and f"Host: 127.0.0.2:{upstream.port}\r\n" in sent
    assert "cdn-neighbour" not in sent and "/second" not in sent


async def test_a_body_without_a_length_is_refused_before_anything_is_sent(upstream):
    proxy = HostProxy(deciding({"127.0.0.2": NAMED}))
    request = (f"POST http://127.0.0.2:{upstream.port}/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
               "5\r\nhello\r\n0\r\n\r\n")
    async with proxy.serving() as path:
        answer = await exchange(path, request.encode())
    assert answer.startswith(b"HTTP/1.1 411") and b"Content-Length" in answer
    assert upstream.connections == 0


async def test_a_refused_host_gets_a_403_naming_it_and_is_never_looked_up():
    calls: list[tuple[str, int]] = []
    proxy = HostProxy(deciding({}, calls))
    async with proxy.serving() as path:
        answer = await exchange(path, b"CONNECT secret-data.attacker.invalid:443 HTTP/1.1\r\n\r\n")
    # A lookup of a name that does not exist would have answered 502: the name never left the machine.
    assert answer.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert b"refused secret-data.attacker.invalid:443: no rule allows it" in answer
    assert b'`network: {"secret-data.attacker.invalid": allow}`' in answer
    assert calls == [("secret-data.attacker.invalid", 443)]
    assert proxy.refused == {"secret-data.attacker.invalid:443": "no rule allows it"} and proxy.reached == []


async def test_each_host_and_port_is_decided_once_even_when_requests_race(upstream):
    calls: list[tuple[str, int]] = []
    proxy = HostProxy(deciding({"127.0.0.2": NAMED}, calls, delay_s=0.05))
    connect = f"CONNECT 127.0.0.2:{upstream.port} HTTP/1.1\r\n\r\n".encode()
    async with proxy.serving() as path:
        answers = await asyncio.gather(*(exchange(path, connect, b"x") for _ in range(5)))
        await exchange(path, b"CONNECT 127.0.0.2:1 HTTP/1.1\r\n\r\n")
    assert all(a.endswith(b"echo:x") for a in answers)
    assert calls == [("127.0.0.2", upstream.port), ("127.0.0.2", 1)]


@pytest.mark.parametrize("host", ["127.0.0.2", "localhost"])
async def test_a_private_address_is_refused_unless_the_rule_names_the_host(upstream, host):
    proxy = HostProxy(deciding({host: Verdict(True, named=False)}))
    async with proxy.serving() as path:
        answer = await exchange(path, f"CONNECT {host}:{upstream.port} HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 403") and b"a loopback, private or link-local address" in answer
    assert upstream.connections == 0


@pytest.mark.parametrize(("request_head", "said"), [
    (b"hello\r\n\r\n", b"this is an HTTP proxy"),
    (b"GET /relative HTTP/1.1\r\n\r\n", b"not an absolute http:// URI"),
    (b"GET ftp://example.com/x HTTP/1.1\r\n\r\n", b"not an absolute http:// URI"),
    (b"CONNECT example.com:99999 HTTP/1.1\r\n\r\n", b"does not name a port between 1 and 65535"),
    (b"CONNECT exa%mple.com:443 HTTP/1.1\r\n\r\n", b"is not a host name"),
    (b"CONNECT [::1]x:443 HTTP/1.1\r\n\r\n", b"is not a host and port"),
])
async def test_a_malformed_request_gets_a_clear_400_and_decides_nothing(request_head, said):
    calls: list[tuple[str, int]] = []
    proxy = HostProxy(deciding({}, calls))
    async with proxy.serving() as path:
        answer = await exchange(path, request_head)
    assert answer.startswith(b"HTTP/1.1 400 Bad Request") and said in answer
    assert calls == []


async def test_a_request_head_past_the_limit_is_refused():
    proxy = HostProxy(deciding({}))
    async with proxy.serving() as path:
        answer = await exchange(path, b"GET http://example.com/ HTTP/1.1\r\nX: " + b"a" * HEAD_LIMIT + b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 431")


async def test_a_failing_decision_refuses_and_the_proxy_goes_on(upstream):
    async def broken(host: str, port: int) -> Verdict:
        raise RuntimeError("rules unreadable")

    proxy = HostProxy(broken)
    async with proxy.serving() as path:
        first = await exchange(path, f"CONNECT 127.0.0.2:{upstream.port} HTTP/1.1\r\n\r\n".encode())
        second = await exchange(path, b"CONNECT 127.0.0.2:2 HTTP/1.1\r\n\r\n")
    assert b"the permission check failed: rules unreadable" in first and second.startswith(b"HTTP/1.1 403")
    assert upstream.connections == 0


async def test_leaving_the_block_cuts_open_tunnels_and_removes_the_socket(upstream):
    proxy = HostProxy(deciding({"127.0.0.2": NAMED}))
    async with proxy.serving() as path:
        reader, writer = await asyncio.open_unix_connection(str(path))
        writer.write(f"CONNECT 127.0.0.2:{upstream.port} HTTP/1.1\r\n\r\n".encode())
        await reader.readuntil(b"\r\n\r\n")
    assert await asyncio.wait_for(reader.read(), 5) == b""
    assert not path.exists() and not path.parent.exists()
    writer.close()


@pytest.mark.parametrize(("address", "public"), [
    ("93.184.215.14", True), ("2606:4700:4700::1111", True),
    ("127.0.0.1", False), ("127.0.0.2", False), ("10.1.2.3", False), ("172.16.0.1", False),
    ("192.168.1.1", False), ("169.254.169.254", False), ("100.64.0.1", False), ("0.0.0.0", False),
    ("224.0.0.1", False), ("::1", False), ("fe80::1%eth0", False), ("fd00:ec2::254", False),
    ("::ffff:127.0.0.1", False), ("::ffff:10.0.0.1", False), ("::", False),
])
def test_only_addresses_the_internet_routes_are_public(address, public):
    assert is_public(address) is public


@pytest.mark.parametrize(("authority", "parsed"), [
    ("PyPI.org.:443", ("pypi.org", 443)), ("example.com", ("example.com", 443)),
    ("[::1]:8080", ("::1", 8080)), ("[2001:db8::1]", ("2001:db8::1", 443)), ("10.0.0.1:22", ("10.0.0.1", 22)),
])
def test_an_authority_becomes_a_lowercase_host_and_a_port(authority, parsed):
    assert split_authority(authority, 443) == parsed


async def test_a_decision_still_waiting_when_the_command_ends_is_withdrawn():
    asking = asyncio.Event()
    withdrawn: list[bool] = []

    async def person_away(host: str, port: int) -> Verdict:
        asking.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            withdrawn.append(True)
            raise
        return NAMED

    proxy = HostProxy(person_away)
    async with proxy.serving() as path:
        reader, writer = await asyncio.open_unix_connection(str(path))
        writer.write(b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n")
        await asyncio.wait_for(asking.wait(), 5)
    assert withdrawn == [True]
    assert await asyncio.wait_for(reader.read(), 5) == b""
    writer.close()
