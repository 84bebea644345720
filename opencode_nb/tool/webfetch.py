"""webfetch: a web page as markdown, text or HTML, within size and time bounds."""

from __future__ import annotations

import re

import httpx
from pydantic import BaseModel, Field

from ..errors import ToolError
from .base import Tool, ToolContext, ToolResult

MAX_BYTES = 5 * 1024 * 1024
DEFAULT_TIMEOUT_S = 30
MAX_TIMEOUT_S = 120


class WebFetchParams(BaseModel):
    url: str = Field(description="The http(s) URL to fetch")
    format: str = Field("markdown", description="markdown, text or html")
    timeout: float | None = Field(None, gt=0, le=MAX_TIMEOUT_S, description="Seconds to wait (default 30)")


class WebFetchTool(Tool[WebFetchParams]):
    id = "webfetch"
    params = WebFetchParams

    async def execute(self, params: WebFetchParams, ctx: ToolContext) -> ToolResult:
        if not re.match(r"^https?://", params.url):
            raise ToolError("The URL must start with http:// or https://.")
        if params.format not in ("markdown", "text", "html"):
            raise ToolError("format must be markdown, text or html.")
        await ctx.ask("webfetch", [params.url], always=["*"], metadata={"url": params.url})
        timeout = params.timeout or DEFAULT_TIMEOUT_S
        body = bytearray()
        try:
            async with (
                httpx.AsyncClient(follow_redirects=True, timeout=timeout) as client,
                client.stream("GET", params.url, headers={"User-Agent": "opencode_nb webfetch",
                                                          "Accept": "text/html,text/plain,*/*;q=0.8"}) as response,
            ):
                if response.status_code >= 400:
                    raise ToolError(f"{params.url} answered HTTP {response.status_code}.")
                async for chunk in response.aiter_bytes():
                    body.extend(chunk)
                    if len(body) > MAX_BYTES:
                        raise ToolError(f"{params.url} is larger than {MAX_BYTES // (1024 * 1024)} MB.")
                kind = response.headers.get("content-type", "")
                encoding = response.encoding or "utf-8"
        except httpx.TimeoutException:
            raise ToolError(f"{params.url} did not answer within {timeout:g} s.") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"Could not fetch {params.url}: {exc}.") from None
        text = body.decode(encoding, errors="replace")
        if "html" in kind and params.format != "html":
            text = html_to_markdown(text) if params.format == "markdown" else html_to_text(text)
        return ToolResult(f"{params.url} ({kind.split(';')[0] or 'unknown type'})", text,
                          {"url": params.url, "content_type": kind, "bytes": len(body)})


def html_to_markdown(html: str) -> str:
    from markdownify import markdownify

    cleaned = re.sub(r"<(script|style|noscript)\b.*?</\1>", "", html, flags=re.S | re.I)
    return re.sub(r"\n{3,}", "\n\n", markdownify(cleaned, heading_style="ATX")).strip()


def html_to_text(html: str) -> str:
    import html as entities

    cleaned = re.sub(r"<(script|style|noscript)\b.*?</\1>", "", html, flags=re.S | re.I)
    text = entities.unescape(re.sub(r"<[^>]+>", " ", cleaned))
    return re.sub(r"[ \t]+", " ", re.sub(r"\n\s*\n+", "\n\n", text)).strip()
