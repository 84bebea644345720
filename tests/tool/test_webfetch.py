import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from opencode_nb.errors import RejectedError, ToolError
from opencode_nb.tool.webfetch import MAX_BYTES, WebFetchTool

from .fakes import RecordingContext

PAGE = (b"<html><head><title>T</title><style>p{color:red}</style><script>alert(1)</script></head><body>"
        b"<h1>Docs</h1><p>Use <b>mean</b> wisely, see <a href='/api'>the API</a>.</p>"
        b"<ul><li>one</li><li>two</li></ul></body></html>")
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, status, body=b"", kind="text/html; charset=utf-8", length=None):
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        routes = {
            "/doc": lambda: self.send(200, PAGE),
            "/plain": lambda: self.send(200, "Grüße\n".encode(), "text/plain; charset=utf-8"),
            "/image.png": lambda: self.send(200, PNG, "image/png"),
            "/archive.zip": lambda: self.send(200, b"PK\x03\x04", "application/zip"),
            "/missing": lambda: self.send(404, b"no"),
            "/huge": lambda: self.send(200, b"x" * 100, "text/plain", length=MAX_BYTES + 1),
            "/redirect": lambda: self.redirect("/doc"),
            "/slow": self.slow,
        }
        routes.get(self.path, lambda: self.send(404))()

    def redirect(self, to):
        self.send_response(302)
        self.send_header("location", to)
        self.send_header("content-length", "0")
        self.end_headers()

    def slow(self):
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.end_headers()
        for _ in range(40):  # a trickle that never trips a per-read timeout, only the total one
            try:
                self.wfile.write(b"x")
                self.wfile.flush()
            except OSError:
                return
            time.sleep(0.1)


@pytest.fixture
def site():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def test_html_becomes_markdown_by_default(ctx, site):
    result = await WebFetchTool().run({"url": f"{site}/doc"}, ctx)
    assert result.output == "# Docs\n\nUse **mean** wisely, see [the API](/api).\n\n- one\n- two"
    assert result.title == f"{site}/doc (text/html)" and result.metadata["content_type"].startswith("text/html")
    [asked] = ctx.asked
    assert (asked.permission, asked.patterns, asked.always) == ("webfetch", [f"{site}/doc"], ["*"])


async def test_html_becomes_plain_text_or_stays_html(ctx, site):
    text = await WebFetchTool().run({"url": f"{site}/doc", "format": "text"}, ctx)
    assert text.output == "Docs\nUse mean wisely, see the API.\none\ntwo"
    html = await WebFetchTool().run({"url": f"{site}/doc", "format": "html"}, ctx)
    assert html.output == PAGE.decode()


async def test_text_is_decoded_with_its_charset_and_redirects_are_followed(ctx, site):
    assert (await WebFetchTool().run({"url": f"{site}/plain"}, ctx)).output == "Grüße\n"
    result = await WebFetchTool().run({"url": f"{site}/redirect"}, ctx)
    assert result.output.startswith("# Docs") and result.metadata["final_url"] == f"{site}/doc"


async def test_images_come_back_as_attachments(ctx, site):
    result = await WebFetchTool().run({"url": f"{site}/image.png"}, ctx)
    [image] = result.attachments
    assert image.mime == "image/png" and image.url.startswith("data:image/png;base64,")


@pytest.mark.parametrize(("path", "message"), [
    ("/missing", "answered HTTP 404"),
    ("/archive.zip", "is application/zip, not a text page"),
    ("/huge", "larger than 5 MB"),
])
async def test_fetch_errors_are_clear(ctx, site, path, message):
    with pytest.raises(ToolError, match=message):
        await WebFetchTool().run({"url": f"{site}{path}"}, ctx)


async def test_the_whole_fetch_is_bounded_in_time(ctx, site):
    started = time.monotonic()
    with pytest.raises(ToolError, match="did not answer within 0.5 s"):
        await WebFetchTool().run({"url": f"{site}/slow", "timeout": 0.5}, ctx)
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "example.com", "https://"])
async def test_only_http_and_https_urls_are_fetched_and_nothing_is_asked_before_that(ctx, url):
    with pytest.raises(ToolError, match="must start with http:// or https://"):
        await WebFetchTool().run({"url": url}, ctx)
    assert ctx.asked == []


async def test_an_unknown_format_is_invalid_input(ctx, site):
    with pytest.raises(ToolError, match="format: Input should be 'markdown', 'text' or 'html'"):
        await WebFetchTool().run({"url": f"{site}/doc", "format": "pdf"}, ctx)


async def test_a_refused_fetch_does_not_fetch(project, site):
    ctx = RecordingContext(project, reject={"webfetch"})
    with pytest.raises(RejectedError):
        await WebFetchTool().run({"url": f"{site}/doc"}, ctx)
