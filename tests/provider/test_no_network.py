import socket

import pytest

from opencode_nb.errors import ProviderError
from opencode_nb.provider import LLMMessage, LLMRequest, TextBlock, model_info
from opencode_nb.provider.anthropic import AnthropicProvider


def test_connections_beyond_loopback_are_refused(loopback_only):
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("192.0.2.1", 443), timeout=1)
    with pytest.raises(ConnectionRefusedError):
        socket.getaddrinfo("api.anthropic.com", 443)
    assert len(loopback_only) == 2
    loopback_only.clear()


async def test_a_client_without_base_url_stays_on_this_machine(loopback_only):
    provider = AnthropicProvider(api_key="sk-ant-x")  # falls back to ANTHROPIC_BASE_URL, set to a dead local port
    request = LLMRequest(model=model_info("anthropic", "claude-haiku-4-5"),
                         messages=[LLMMessage(role="user", content=[TextBlock(text="hi")])])
    with pytest.raises(ProviderError) as err:
        [e async for e in provider.stream(request)]
    assert err.value.kind == "connection"
    assert loopback_only == []
