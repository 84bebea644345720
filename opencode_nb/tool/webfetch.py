"""webfetch: a web page as markdown, text or HTML, within size and time bounds.

HTML becomes markdown through `markdownify` (headings, links, lists and tables survive, which plain text
loses) and text through BeautifulSoup's text extraction; scripts, styles and other invisible parts are
dropped first. Images come back as attachments. The whole fetch, redirects and a slow body included,
must finish within the timeout.
"""

from __future__ import annotations

import asyncio
import base64
import re
from typing import Literal

import httpx
from pydantic import BaseModel, Field

from ..errors import ToolError
from ..values import Attachment
from .base import Tool, ToolContext, ToolResult, for_person

MAX_BYTES = 5 * 1024 * 1024
DEFAULT_TIMEOUT_S = 30
MAX_TIMEOUT_S = 120
INVISIBLE = ("script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "head")
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml", "application/javascript",
              "application/x-yaml", "application/yaml", "application/toml", "application/csv")
ACCEPT = {
    "markdown": "text/markdown;q=1.0, text/html;q=0.9, text/plain;q=0.8, */*;q=0.1",
    "text": "text/plain;q=1.0, text/html;q=0.9, */*;q=0.1",
    "html": "text/html;q=1.0, application/xhtml+xml;q=0.9, */*;q=0.1",
}


class WebFetchParams(BaseModel):
    url: str = Field(description="The http:// or https:// URL to fetch")
    format: Literal["markdown", "text", "html"] = Field(
        "markdown", description="How to return the page: markdown (default), text, or the raw html"
    )
    timeout: float | None = Field(
        None, gt=0, le=MAX_TIMEOUT_S,
        description=f"Seconds the whole fetch may take (default {DEFAULT_TIMEOUT_S}, at most {MAX_TIMEOUT_S})",
    )


class WebFetchTool(Tool[WebFetchParams]):
    id = "webfetch"
    params = WebFetchParams

    async def execute(self, params: WebFetchParams, ctx: ToolContext) -> ToolResult:
        url = params.url.strip()
        if not re.match(r"https?://[^/\s]+", url, re.I):
            raise ToolError(f"Cannot fetch {url!r}: the URL must start with http:// or https:// and name a host.")
        await ctx.ask("webfetch", [url], always=["*"], metadata={"url": url, "format": params.format})
        timeout_s = params.timeout or DEFAULT_TIMEOUT_S
        try:
            async with asyncio.timeout(timeout_s):
                body, kind, encoding, final_url = await _download(url, params.format, timeout_s)
        except TimeoutError:
            raise ToolError(f"{url} did not answer within {timeout_s:g} s. Try again with a larger timeout "
                            f"(at most {MAX_TIMEOUT_S} s), or another source.") from None
        mime = kind.split(";")[0].strip().lower()
        title = f"{url} ({mime or 'unknown type'})"
        metadata = {"url": url, "final_url": final_url, "content_type": kind, "bytes": len(body)}
        if mime.startswith("image/") and mime != "image/svg+xml":
            data_url = f"data:{mime};base64,{base64.b64encode(body).decode()}"
            return ToolResult(title, f"Image fetched successfully: {url} ({mime}, {len(body):,} bytes) is attached.",
                              {**metadata, **for_person(f"Fetched an image ({mime}, {len(body):,} bytes)", "")},
                              [Attachment(mime=mime, url=data_url, filename=url.rsplit("/", 1)[-1] or None)])
        if mime and not mime.startswith(TEXT_TYPES) and not mime.endswith(("+xml", "+json")):
            raise ToolError(f"{url} is {mime}, not a text page, so it cannot be shown. Download it with bash "
                            "(curl -o) and inspect it with a suitable program instead.")
        text = body.decode(encoding, errors="replace")
        if "html" in mime and params.format == "markdown":
            text = html_to_markdown(text)
        elif "html" in mime and params.format == "text":
            text = html_to_text(text)
        as_markdown = ("html" in mime and params.format == "markdown") or "markdown" in mime
        said = f"Fetched {len(body):,} bytes of {mime or 'text'}" + (" as markdown" if as_markdown else "")
        return ToolResult(title, text or "(The page is empty.)",
                          {**metadata, **for_person(said if text else "Fetched an empty page", text,
                                                    markdown=as_markdown)})


async def _download(url: str, fmt: str, timeout_s: float) -> tuple[bytes, str, str, str]:
    headers = {"User-Agent": "Mozilla/5.0 (compatible; opencode_nb webfetch)", "Accept": ACCEPT[fmt],
               "Accept-Language": "en-US,en;q=0.9"}
    body = bytearray()
    try:
        async with (
            httpx.AsyncClient(follow_redirects=True, timeout=timeout_s, max_redirects=10) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            if response.status_code >= 400:
                raise ToolError(f"{url} answered HTTP {response.status_code} {response.reason_phrase}.")
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > MAX_BYTES:
                raise ToolError(_too_large(url))
            async for chunk in response.aiter_bytes():
                body.extend(chunk)
                if len(body) > MAX_BYTES:
                    raise ToolError(_too_large(url))
            return (bytes(body), response.headers.get("content-type", ""), response.encoding or "utf-8",
                    str(response.url))
    except httpx.TimeoutException:
        raise TimeoutError from None
    except httpx.TooManyRedirects:
        raise ToolError(f"{url} redirects too many times.") from None
    except httpx.HTTPError as exc:
        raise ToolError(f"Could not fetch {url}: {exc or type(exc).__name__}.") from None


def _too_large(url: str) -> str:
    return (f"{url} is larger than {MAX_BYTES // (1024 * 1024)} MB, too large to fetch here. Download it with bash "
            "(curl -o) and read it in pieces instead.")


def _soup(html: str):  # type: ignore[no-untyped-def]
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(INVISIBLE):
        tag.decompose()
    return soup


def html_to_markdown(html: str) -> str:
    from markdownify import MarkdownConverter

    soup = _soup(html)
    text = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


BLOCKS = ("p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "section", "article", "pre",
          "blockquote", "ul", "ol", "dl", "dt", "dd", "header", "footer", "nav", "main", "aside", "figure", "hr")


def html_to_text(html: str) -> str:
    soup = _soup(html)
    for tag in soup(BLOCKS):
        tag.insert_after("\n")
    for cell in soup(("td", "th")):
        cell.insert_after("\t")
    text = soup.get_text()
    lines = (re.sub(r"[ \t\xa0]+", " ", line).strip() for line in text.splitlines())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
