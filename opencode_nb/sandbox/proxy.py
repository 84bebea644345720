"""An HTTP proxy outside the sandbox: the one road from a confined command to the network, decided host by host.

A sandboxed command has a network namespace of its own, with nothing in it but a loopback. Its only way out
is the relay (`relay.py`) listening on that loopback, which hands each connection over a Unix socket to this
proxy, running in our own event loop on the machine's real network. The proxy speaks just enough HTTP to
learn where a connection wants to go: `CONNECT host:port` (HTTPS, and anything else that tunnels) and
absolute URIs (`GET http://host/path`, plain HTTP). Everything else (raw TCP, UDP, DNS) has no road at all.

For each new host and port it asks `decide` (the permission rules, perhaps a person) once, and then:

- a refusal is an HTTP 403 whose body says which host was refused and how to allow it; `refused` keeps the
  list so the command's result can say it too;
- an allowed name is resolved here, once, and the connection made to the address found, so the answer the
  rules gave cannot be changed by a second lookup that answers differently;
- an address that is not public (loopback, private ranges, link-local and with it the cloud metadata
  address, unique-local IPv6, the unspecified and reserved ranges) is refused unless the deciding rule names
  the host exactly: the proxy runs on the person's machine and must not become a door to the services
  listening there.

Nothing is resolved before `decide` allowed the host: a lookup of `secret-data.attacker.example` is itself
a message leaving the machine.

A plain HTTP request goes out with the `Host` the rules judged, and alone: its body is counted and nothing
the client sends after it reaches the host, so another site sharing the allowed host's address (a CDN) cannot
be named in a second request. Inside a CONNECT tunnel the proxy sees only TLS: the name the client puts in
its TLS handshake is not checked against the host allowed, so allowing a host trusts whatever shares its
address to refuse names it does not serve.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import re
import shutil
import socket
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HEAD_LIMIT = 64 * 1024
"""The longest request head (request line and headers) read before the proxy gives up on a client."""
CONNECT_TIMEOUT_S = 15.0
CHUNK = 65536

HOST_NAME = re.compile(r"^[a-z0-9_]([a-z0-9_.-]{0,252})$")
"""What a host name may be spelled with; anything else (spaces, `@`, `%`, `/`) is refused before any rule
sees it, so a pattern never has to think about such names."""
HOP_HEADERS = {"proxy-connection", "proxy-authorization", "connection", "keep-alive"}
"""Headers meant for the proxy, not for the host: they are not passed on."""


@dataclass(frozen=True)
class Verdict:
    """What `decide` says of one host and port."""

    allowed: bool
    reason: str = ""
    """Why it was refused, in words for the tool output ("a rule denies it")."""
    named: bool = False
    """The deciding rule names this host exactly: it may then resolve to a loopback or private address."""


Decide = Callable[[str, int], Awaitable[Verdict]]
"""`await decide(host, port)`: the host in lower case, without brackets or trailing dot."""


class Refused(Exception):
    """A request the proxy answers itself, with `status` and a message, instead of passing it on."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def is_public(address: str) -> bool:
    """Whether an IP address is one the open internet can route to (an IPv4 address inside IPv6 judged as such)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def ip_literal(host: str) -> str | None:
    """`host` as an IP address when it is written as one, else None."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return None


def split_authority(authority: str, default_port: int) -> tuple[str, int]:
    """`host[:port]` or `[v6]:port` as a normalised host and a port.

    Raises:
        Refused: not a host and port the proxy will pass on.
    """
    host, port_text = authority, ""
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        if rest and not rest.startswith(":"):
            raise Refused(400, f"`{authority}` is not a host and port")
        port_text = rest[1:]
    elif authority.count(":") == 1:
        host, port_text = authority.split(":")
    host = host.lower().rstrip(".")
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise Refused(400, f"`{authority}` does not name a port between 1 and 65535")
        port = int(port_text)
    else:
        port = default_port
    if ip_literal(host) is None and not HOST_NAME.match(host):
        raise Refused(400, f"`{host}` is not a host name")
    return host, port


class HostProxy:
    """One command's proxy: it lives as long as the command, and remembers each host it decided.

    Args:
        decide: the permission decision for a host and port, asked once for each.
        connect_timeout_s: how long a connection to an allowed host may take to open.
    """

    def __init__(self, decide: Decide, *, connect_timeout_s: float = CONNECT_TIMEOUT_S) -> None:
        self.decide = decide
        self.connect_timeout_s = connect_timeout_s
        self.refused: dict[str, str] = {}
        """`host:port` → why it was refused, in the order the command tried them."""
        self.reached: list[str] = []
        """`host:port` of every connection made, in order."""
        self._verdicts: dict[tuple[str, int], asyncio.Future[Verdict]] = {}
        self._clients: set[asyncio.Task[None]] = set()
        self._closing = False

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[Path]:
        """Listen on a fresh Unix socket (in a folder only we can enter) for as long as the block runs;
        yields the socket's path. On the way out every connection still open is cut."""
        folder = Path(tempfile.mkdtemp(prefix="opencode-nb-proxy-"))
        path = folder / "proxy.sock"
        server = await asyncio.start_unix_server(self._client, path=str(path), limit=HEAD_LIMIT)
        try:
            yield path
        finally:
            server.close()
            self._closing = True
            # A decision still waiting (a person not yet answering) is for a command that has ended: its
            # prompt is withdrawn, not left open.
            waiting: list[asyncio.Future[Any]] = [*self._clients,
                                                  *(v for v in self._verdicts.values() if not v.done())]
            for task in waiting:
                task.cancel()
            if waiting:
                await asyncio.gather(*waiting, return_exceptions=True)
            await server.wait_closed()
            shutil.rmtree(folder, ignore_errors=True)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._clients.add(task)
        try:
            await self._serve(reader, writer)
        except Refused as refusal:
            await _answer(writer, refusal.status, refusal.message)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            pass
        except asyncio.CancelledError:
            # Cut by `serving` as the command ended: the task ends here, quietly (asyncio's server would
            # otherwise report every cut tunnel as an error). Any other cancellation goes on.
            if not self._closing:
                raise
        finally:
            self._clients.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            raise Refused(431, f"the request head is longer than {HEAD_LIMIT // 1024} KB") from None
        except asyncio.IncompleteReadError:
            return  # the client left before saying anything
        request_line, _, headers = head.decode("latin-1").partition("\r\n")
        parts = request_line.split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            raise Refused(400, "this is an HTTP proxy: send `CONNECT host:port HTTP/1.1` or an absolute URI")
        method, target, version = parts
        if method.upper() == "CONNECT":
            host, port = split_authority(target, 443)
            upstream_reader, upstream_writer = await self._open(host, port)
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
        else:
            scheme, _, rest = target.partition("://")
            if scheme.lower() != "http" or not rest:
                raise Refused(400, f"`{target}` is not an absolute http:// URI (HTTPS goes through CONNECT)")
            authority, slash, path = rest.partition("/")
            authority = authority.rpartition("@")[2]
            host, port = split_authority(authority, 80)
            length = _body_length(headers)
            upstream_reader, upstream_writer = await self._open(host, port)
            upstream_writer.write(_origin_form(method, "/" + path if slash else "/", version, headers, authority))
            try:
                await _forward(reader, upstream_writer, length)
                await _copy(upstream_reader, writer)
            finally:
                upstream_writer.close()
            return
        await _pipe(reader, writer, upstream_reader, upstream_writer)

    async def _open(self, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to `host:port` if the rules allow it and it resolves to an address they allow."""
        key = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
        verdict = await self._verdict(host, port)
        if not verdict.allowed:
            self.refused.setdefault(key, verdict.reason)
            raise Refused(403, f"The sandbox's network permission refused {key}: {verdict.reason}. To allow it, "
                               f'add a rule naming the host, e.g. `network: {{"{host}": allow}}`.')
        addresses = await self._resolve(host, port)
        hidden = [a for a in addresses if not is_public(a)]
        if hidden and not verdict.named:
            why = f"it resolves to {hidden[0]}, a loopback, private or link-local address"
            self.refused.setdefault(key, why)
            raise Refused(403, f"The sandbox's network proxy refused {key}: {why}. Only a rule naming the host "
                               f'exactly opens such an address, e.g. `network: {{"{host}": allow}}`.')
        failure: Exception | None = None
        for address in addresses:
            try:
                async with asyncio.timeout(self.connect_timeout_s):
                    opened = await asyncio.open_connection(address, port, limit=CHUNK)
            except (OSError, TimeoutError) as exc:
                failure = exc
                continue
            self.reached.append(key)
            return opened
        raise Refused(502, f"could not connect to {key}: {failure or 'no address'}")

    async def _verdict(self, host: str, port: int) -> Verdict:
        """One decision per host and port; requests racing for the same one wait for the first."""
        pending = self._verdicts.get((host, port))
        if pending is None:
            pending = asyncio.ensure_future(self.decide(host, port))
            self._verdicts[(host, port)] = pending
        try:
            return await asyncio.shield(pending)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a broken decision refuses; it must not take the proxy down
            return Verdict(False, f"the permission check failed: {exc}")

    async def _resolve(self, host: str, port: int) -> list[str]:
        literal = ip_literal(host)
        if literal is not None:
            return [literal]
        try:
            found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise Refused(502, f"could not resolve {host}: {exc}") from None
        addresses: list[str] = []
        for *_, sockaddr in found:
            if str(sockaddr[0]) not in addresses:
                addresses.append(str(sockaddr[0]))
        return addresses


def _origin_form(method: str, path: str, version: str, headers: str, authority: str) -> bytes:
    """The request as the host expects it: its own path, the proxy's headers dropped, and the `Host` the rules
    allowed (a different `Host` would reach another site sharing the address, as on a CDN)."""
    kept = [line for line in headers.split("\r\n") if line and line.split(":", 1)[0].strip().lower()
            not in HOP_HEADERS | {"host"}]
    return "\r\n".join([f"{method} {path} {version}", f"Host: {authority}", *kept, "Connection: close", "",
                         ""]).encode("latin-1")


def _body_length(headers: str) -> int:
    """How many bytes of body follow the head. One request per connection, its body counted: whatever the
    client sends after it (a second request, for another `Host`) never reaches the host.

    Raises:
        Refused: a body without a length (chunked), or a length that is not a number.
    """
    length = 0
    for line in headers.split("\r\n"):
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "transfer-encoding":
            raise Refused(411, "send the request body with a Content-Length (chunked bodies are not passed on)")
        if name == "content-length":
            if not value.strip().isdigit():
                raise Refused(400, f"Content-Length `{value.strip()}` is not a number")
            length = int(value.strip())
    return length


async def _forward(source: asyncio.StreamReader, sink: asyncio.StreamWriter, length: int) -> None:
    while length > 0:
        data = await source.read(min(CHUNK, length))
        if not data:
            return
        sink.write(data)
        await sink.drain()
        length -= len(data)


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    while data := await source.read(CHUNK):
        sink.write(data)
        await sink.drain()


async def _pipe(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter,
                upstream_reader: asyncio.StreamReader, upstream_writer: asyncio.StreamWriter) -> None:
    """Copy both ways until both sides are done; either side closing its half is passed on."""

    async def copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(CHUNK):
                sink.write(data)
                await sink.drain()
            if sink.can_write_eof():
                sink.write_eof()
        except (ConnectionError, OSError):
            sink.close()

    try:
        await asyncio.gather(copy(client_reader, upstream_writer), copy(upstream_reader, client_writer))
    finally:
        upstream_writer.close()
        with contextlib.suppress(Exception):
            await upstream_writer.wait_closed()


REASONS = {400: "Bad Request", 403: "Forbidden", 411: "Length Required", 431: "Request Header Fields Too Large",
           502: "Bad Gateway"}


async def _answer(writer: asyncio.StreamWriter, status: int, message: str) -> None:
    body = (message + "\n").encode()
    head = (f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    with contextlib.suppress(ConnectionError, OSError):
        writer.write(head.encode() + body)
        await writer.drain()
