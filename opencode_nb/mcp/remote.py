"""How a remote MCP server is reached: streamable HTTP first, then the older SSE transport.

Both come from the SDK. The entry's headers (their `{env:NAME}` already filled in by the loader) go with every
request; they are secrets (`entries.secret_values`), so they never appear in what we show or store.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from .client import Opener
from .entries import ServerEntry


def remote_openers(entry: ServerEntry) -> list[Opener]:
    url = entry.config.url or ""
    headers = dict(entry.config.headers)

    @contextlib.asynccontextmanager
    async def streamable() -> AsyncIterator[TransportStreams]:
        async with create_mcp_http_client(headers=headers) as http, \
                streamable_http_client(url, http_client=http) as streams:
            yield streams

    @contextlib.asynccontextmanager
    async def sse() -> AsyncIterator[TransportStreams]:
        async with sse_client(url, headers=headers) as streams:
            yield streams

    return [streamable, sse]
