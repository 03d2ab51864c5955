"""A loopback TEST AND DEMO server speaking the OpenAI chat-completions and Anthropic Messages shapes.

For tests, the performance benchmark and offline demos of the HTTP providers: it answers on 127.0.0.1
the rerank, CUAD extraction and label-audit requests in each provider's documented shape, in the shapes
real servers return (``answers.SHAPES``), with optional latency, and counts requests per body hash (so
a test can show that no request was ever sent twice). It is a real HTTP server (threaded
``http.server``), not a mock, and it is not a model: every answer carries the ``x-simulated-provider``
header, the client records it on the receipt, and every run made against it is labelled "simulated
provider" on its pages, exports and summaries.

``python manage.py provider_loopback --port 0`` runs one in the foreground on a free port.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from reviewapp.providers.loopback.answers import (
    LABELS,
    SHAPES,
    SIMULATED_HEADER,
    SIMULATED_VALUE,
    anthropic_answer,
    grades_for,
    openai_answer,
)

__all__ = ["LABELS", "SHAPES", "SIMULATED_HEADER", "SIMULATED_VALUE", "LoopbackServer", "Reply", "Responder",
           "default_responder", "grades_for", "responder_for"]


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate_to: int | None = None  # send only this many body bytes while announcing the full length


Responder = Callable[[str, dict[str, str], bytes], Reply]


def responder_for(shape: str = "auto") -> Responder:
    """Answers every job in each provider's shape (see ``answers``), marked as simulated."""
    if shape not in SHAPES:
        raise ValueError(f"shape {shape!r}: use one of {', '.join(SHAPES)}")

    def respond(path: str, headers: dict[str, str], body_bytes: bytes) -> Reply:
        marker = {SIMULATED_HEADER: SIMULATED_VALUE}
        try:
            body = json.loads(body_bytes)
        except ValueError:
            return Reply(status=400, headers=marker,
                         body=b'{"error":{"message":"invalid JSON body","type":"invalid_request_error"}}')
        if path.endswith("/chat/completions"):
            payload = openai_answer(body, body_bytes, shape=shape)
        elif path.endswith("/v1/messages"):
            payload = anthropic_answer(body, body_bytes, shape=shape)
        else:
            return Reply(status=404, headers=marker, body=b'{"error":{"message":"not found"}}')
        return Reply(body=json.dumps(payload, ensure_ascii=False).encode(), headers=marker)

    return respond


default_responder = responder_for("auto")


class LoopbackServer:
    """Start with ``with LoopbackServer() as server: server.url``; inspect ``server.requests``."""

    def __init__(
        self, responder: Responder | None = None, *, latency: float = 0.0, port: int = 0, shape: str = "auto",
    ) -> None:
        self.responder = responder or responder_for(shape)
        self.latency = latency
        self.requests: list[dict[str, Any]] = []
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # One segment per reply and no Nagle delay, so latency figures measure the client, not TCP.
            disable_nagle_algorithm = True
            wbufsize = 1 << 16

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                if len(raw) < length:
                    # The client went away while sending (a worker killed mid-request): no provider acts on half
                    # a body, so it is not a request received, and counting it would read as a second send.
                    self.close_connection = True
                    return
                headers = {k.lower(): v for k, v in self.headers.items()}
                digest = hashlib.sha256(raw).hexdigest()
                with outer._lock:
                    outer.counts[digest] += 1
                    outer.requests.append({"path": self.path, "headers": headers, "body": raw, "sha256": digest})
                reply = outer.responder(self.path, headers, raw)
                delay = reply.delay or outer.latency
                if delay:
                    time.sleep(delay)
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", reply.headers.get("content-type", "application/json"))
                    for name, value in reply.headers.items():
                        if name.lower() != "content-type":
                            self.send_header(name, value)
                    self.send_header("content-length", str(len(reply.body)))
                    if reply.truncate_to is not None:
                        self.send_header("connection", "close")
                    self.end_headers()
                    self.wfile.write(reply.body if reply.truncate_to is None else reply.body[: reply.truncate_to])
                    self.wfile.flush()
                    if reply.truncate_to is not None:
                        self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        # serve_forever checks for shutdown every poll_interval: its default (0.5 s) made every stop wait up to half a
        # second, paid by each test that starts a server.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="loopback", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # an IPv4 server's address (bytes only for AF_UNIX)
        return f"http://{host}:{port}"

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def max_count_per_body(self) -> int:
        with self._lock:
            return max(self.counts.values(), default=0)
