import pytest

from .wire import WireServer


@pytest.fixture
def wire():
    server = WireServer()
    yield server
    server.close()
