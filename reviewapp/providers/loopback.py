"""A loopback model server speaking the OpenAI chat-completions and Anthropic Messages shapes.

For tests, the performance benchmark and offline demos of the HTTP providers: it
answers on 127.0.0.1 with the documented response shapes, deterministic grades
derived from the request body, optional latency, and counts requests per body
hash (so a test can show that no request was ever sent twice). It is a real HTTP
server (threaded ``http.server``), not a mock.

``python manage.py provider_loopback --port 8765`` runs one in the foreground.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LABELS = ("0", "1", "2", "3")


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate_to: int | None = None  # send only this many body bytes while announcing the full length


Responder = Callable[[str, dict[str, str], bytes], Reply]


def _count_items(body: dict[str, Any]) -> int:
    text = json.dumps(body.get("messages", []), ensure_ascii=False)
    match = re.search(r"exactly (\d+) grade", text) or re.search(r"each of the (\d+) items", text)
    return int(match.group(1)) if match else 1


def grades_for(body_bytes: bytes, n: int) -> list[int]:
    """The loopback model's grades: a deterministic function of the request body."""
    digest = hashlib.sha256(body_bytes).digest()
    return [digest[i] % 4 for i in range(n)]


def _distribution(grade: int) -> dict[str, float]:
    weights = dict.fromkeys(LABELS, 0.04)
    weights[str(grade)] = 0.80
    if grade > 0:
        weights[str(grade - 1)] = 0.08
    return weights


def openai_answer(body: dict[str, Any], body_bytes: bytes) -> dict[str, Any]:
    n = _count_items(body)
    grades = grades_for(body_bytes, n)
    prompt_tokens = max(1, len(body_bytes) // 4)
    answer: dict[str, Any] = {
        "id": "chatcmpl-" + hashlib.sha256(body_bytes).hexdigest()[:24],
        "object": "chat.completion",
        "created": 1758326400,
        "model": body.get("model", ""),
        "system_fingerprint": "fp_loopback",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt_tokens, "completion_tokens": 2 * n - 1, "total_tokens": prompt_tokens + 2 * n - 1,
        },
    }
    if body.get("response_format", {}).get("type") == "json_schema":
        content = json.dumps({"grades": [
            {"item": i + 1, "grade": str(g), "probabilities": _distribution(g)} for i, g in enumerate(grades)
        ]})
        choice = {"index": 0, "message": {"role": "assistant", "content": content, "refusal": None},
                  "logprobs": None, "finish_reason": "stop"}
    else:
        tokens: list[dict[str, Any]] = []
        for i, g in enumerate(grades):
            weights = _distribution(g)
            top = [
                {"token": label, "logprob": math.log(w), "bytes": list(label.encode())} for label, w in weights.items()
            ]
            top.append({"token": "The", "logprob": math.log(0.02), "bytes": list(b"The")})
            top.sort(key=lambda t: -t["logprob"])
            tokens.append({"token": str(g), "logprob": math.log(weights[str(g)]), "bytes": list(str(g).encode()),
                           "top_logprobs": top})
            if i < n - 1:
                tokens.append({"token": ",", "logprob": -0.0001, "bytes": [44],
                               "top_logprobs": [{"token": ",", "logprob": -0.0001, "bytes": [44]}]})
        choice = {"index": 0, "message": {"role": "assistant", "content": ",".join(map(str, grades)), "refusal": None},
                  "logprobs": {"content": tokens, "refusal": None}, "finish_reason": "stop"}
    answer["choices"].append(choice)
    return answer


def anthropic_answer(body: dict[str, Any], body_bytes: bytes) -> dict[str, Any]:
    n = _count_items(body)
    grades = grades_for(body_bytes, n)
    tool = (body.get("tool_choice") or {}).get("name", "record_grades")
    return {
        "id": "msg_" + hashlib.sha256(body_bytes).hexdigest()[:24],
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": [{
            "type": "tool_use", "id": "toolu_" + hashlib.sha256(body_bytes).hexdigest()[:20], "name": tool,
            "input": {"grades": [{"item": i + 1, "grade": str(g), "probabilities": _distribution(g)}
                                 for i, g in enumerate(grades)]},
        }],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": max(1, len(body_bytes) // 4 - 100), "cache_creation_input_tokens": 60,
                  "cache_read_input_tokens": 40, "output_tokens": 30 * n},
    }


def default_responder(path: str, headers: dict[str, str], body_bytes: bytes) -> Reply:
    try:
        body = json.loads(body_bytes)
    except ValueError:
        return Reply(status=400, body=b'{"error":{"message":"invalid JSON body","type":"invalid_request_error"}}')
    if path.endswith("/chat/completions"):
        payload = openai_answer(body, body_bytes)
    elif path.endswith("/v1/messages"):
        payload = anthropic_answer(body, body_bytes)
    else:
        return Reply(status=404, body=b'{"error":{"message":"not found"}}')
    return Reply(body=json.dumps(payload).encode())


class LoopbackServer:
    """Start with ``with LoopbackServer() as server: server.url``; inspect ``server.requests``."""

    def __init__(self, responder: Responder | None = None, *, latency: float = 0.0, port: int = 0) -> None:
        self.responder = responder or default_responder
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
        self._thread = threading.Thread(target=self._server.serve_forever, name="loopback", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
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
