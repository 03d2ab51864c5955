"""The summary PDF renderer fetches the product's own static files and nothing else: a page holding every kind of
reference (img, stylesheet, @import, url() in CSS, file:, http:, data:, a path out of /static/) renders, the
loopback server it points at hears nothing, and the fetcher says which URLs it served and which it refused."""

from __future__ import annotations

import base64
import http.server
import threading

import pytest

from reviewapp.core.exports.pdf import BASE_URL, pdf_from_html, static_only_fetcher, static_path
from tests.grading.contracts.files import PNG


@pytest.fixture
def loopback():
    """A real HTTP server on 127.0.0.1 that records every path asked of it."""
    heard: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            heard.append(self.path)
            body = b"body { color: red }" if self.path.endswith(".css") else PNG
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", heard
    server.shutdown()
    server.server_close()


def _page(origin: str) -> str:
    data = "data:image/png;base64," + base64.b64encode(PNG).decode()
    return f"""<!doctype html><html><head>
<link rel="stylesheet" href="{origin}/linked.css">
<link rel="stylesheet" href="/static/css/app.css">
<style>
@import url("{origin}/imported.css");
@import "file:///etc/hostname";
body {{ background: url("{origin}/background.png"); }}
h1 {{ background-image: url("file:///etc/passwd"); }}
p {{ background-image: url("{data}"); }}
</style></head><body>
<h1>Summary</h1>
<img src="/static/favicon.svg" alt="">
<img src="{origin}/pixel.png" alt="">
<img src="file:///etc/hostname" alt="">
<img src="{data}" alt="">
<img src="/static/../reviewapp/settings.py" alt="">
<img src="/static/%2e%2e/reviewapp/settings.py" alt="">
<img src="../../etc/passwd" alt="">
<p>Every figure of the summary.</p>
</body></html>"""


def test_a_summary_with_every_kind_of_reference_renders_and_reaches_no_server(loopback):
    origin, heard = loopback
    pdf = pdf_from_html(_page(origin))
    assert pdf.startswith(b"%PDF-")
    assert heard == []


def test_the_fetcher_serves_static_files_and_refuses_every_other_url(loopback):
    origin, heard = loopback
    fetcher = static_only_fetcher()
    assert pdf_from_html(_page(origin), fetcher=fetcher).startswith(b"%PDF-")
    assert heard == []
    assert sorted(fetcher.served) == [f"{BASE_URL}static/css/app.css", f"{BASE_URL}static/favicon.svg"]
    refused = " ".join(fetcher.refused)
    for kind in (f"{origin}/linked.css", f"{origin}/imported.css", f"{origin}/background.png",
                 f"{origin}/pixel.png", "file:///etc/hostname", "file:///etc/passwd", "data:image/png"):
        assert kind in refused, kind
    assert not any("settings.py" in url or "passwd" in url for url in fetcher.served)


@pytest.mark.parametrize("url", [
    "https://pdf.invalid/static/../reviewapp/settings.py", "https://pdf.invalid/static/a/../../x",
    "https://pdf.invalid/static/%2e%2e/x", "https://pdf.invalid/static/css/app.css?x=1",
    "https://pdf.invalid/static/", "https://pdf.invalid/other/app.css", "https://example.com/static/css/app.css",
    "file:///static/css/app.css", "data:text/css,body{}", "https://pdf.invalid/static/a\\..\\b",
])
def test_only_a_plain_path_under_the_static_url_counts_as_a_static_file(url):
    assert static_path(url) is None
    assert static_path("https://pdf.invalid/static/css/app.css") == "css/app.css"
