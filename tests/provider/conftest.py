import ipaddress
import socket

import pytest

from .wire_server import WireServer

LOCAL_NAMES = {"localhost", "127.0.0.1", "::1"}


@pytest.fixture
def wire():
    with WireServer() as server:
        yield server


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch):
    """No test here reaches the network.

    An SDK client built without `base_url` falls back to a dead local port (the SDKs read these
    variables), no real key is in reach, and any lookup or connection beyond loopback fails the test.
    """
    for name in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    outside: list[object] = []

    def local(host: object) -> bool:
        if host is None or (isinstance(host, str) and host in LOCAL_NAMES):
            return True
        try:
            return ipaddress.ip_address(str(host)).is_loopback
        except ValueError:
            return False

    def refuse(target: object) -> None:
        outside.append(target)
        raise ConnectionRefusedError(f"tests may not reach the network ({target!r})")

    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def connect(self, address):
        if isinstance(address, tuple) and not local(address[0]):
            refuse(address)
        return real_connect(self, address)

    def connect_ex(self, address):
        if isinstance(address, tuple) and not local(address[0]):
            refuse(address)
        return real_connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if not local(host.decode() if isinstance(host, bytes) else host):
            refuse(host)
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield outside
    assert not outside, f"a test tried to reach the network: {outside}"
