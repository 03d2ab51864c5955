"""What every client shares: a no-retry httpx client, key redaction, one-shot POST, grade schemas."""

from __future__ import annotations

import json
import re
import time
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from django.conf import settings

from reviewapp.providers.local.distributions import renormalise
from reviewapp.providers.types import (
    GradeDistribution,
    GradeSpec,
    Parse,
    PreparedRequest,
    ProviderError,
    SendOutcome,
    StructuredSpec,
    ValidationFailed,
)

if TYPE_CHECKING:
    import httpx

REDACTED = "[redacted]"
# A server whose answers are not a model's (the loopback test server) says so in this response header.
SIMULATED_HEADER = "x-simulated-provider"
MAX_STORED_BODY = 2_000_000  # characters of a response body kept in a receipt


def redact(text: str) -> str:
    """Remove every configured provider key from ``text`` (defence in depth: servers may echo headers)."""
    for value in getattr(settings, "PROVIDER_KEYS", {}).values():
        if value and len(value) >= 8 and value in text:
            text = text.replace(value, REDACTED)
    return text


def check_base_url(base_url: str) -> str:
    """The base URL without its trailing slash, or ProviderError naming what is wrong with it.

    http(s) with a host only; no credentials, query or fragment (a key never travels in a URL: it comes from
    the server's environment or a ``*_FILE``), no whitespace, a valid port.
    """
    text = (base_url or "").strip()
    if not text:
        raise ProviderError("base URL is empty; give e.g. http://127.0.0.1:11434/v1")
    if any(c.isspace() for c in text):
        raise ProviderError(f"base URL {text!r} contains whitespace")
    parsed = urlparse(text)
    if parsed.scheme not in {"http", "https"}:
        raise ProviderError(f"base URL {text!r} must start with http:// or https://")
    if parsed.username or parsed.password or "@" in parsed.netloc:
        # Never echo the URL here: it carries the credentials.
        raise ProviderError("base URL must not carry credentials (user:key@host); keys come from the server's "
                            "environment (OPENAI_COMPATIBLE_API_KEY or its _FILE), never from the URL")
    if not parsed.hostname:
        raise ProviderError(f"base URL {text!r} has no host")
    try:
        parsed.port  # noqa: B018 - raises ValueError on a port out of range or not a number
    except ValueError:
        raise ProviderError(f"base URL {text!r} has an invalid port") from None
    if parsed.query or parsed.fragment:
        raise ProviderError(f"base URL {text.split('?')[0].split('#')[0]!r} must not carry a query string or "
                            "fragment; keys come from the server's environment, never from the URL")
    return text.rstrip("/")


def echoable_base_url(text: str) -> str:
    """A typed base URL as a form may show it back after an error: '' when it may carry a secret."""
    return "" if any(c in text for c in "@?#") else text


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def key_may_go_to(base_url: str, *, configured: str, listed: list[str]) -> bool:
    """May the server's key for a provider be sent to ``base_url``?

    Only to the origin of the configured default base URL, the listed origins, and this machine (a loopback
    host: nothing a browser can point at elsewhere). A base URL is chosen per run (page, API, command), so a
    URL typed in a form must never carry the server's key to another host.
    """
    allowed = {url_origin(configured), *(url_origin(o) for o in listed if o.strip())}
    host = (urlparse(base_url).hostname or "").lower()
    return url_origin(base_url) in allowed or host in LOOPBACK_HOSTS


def url_origin(url: str) -> str:
    """scheme://host:port of a URL (default ports made explicit), for comparing where a key may go."""
    parsed = urlparse(url.strip())
    try:
        port = parsed.port or {"http": 80, "https": 443}.get(parsed.scheme, 0)
    except ValueError:
        port = 0
    return f"{parsed.scheme}://{(parsed.hostname or '').lower()}:{port}"


def http_client(*, concurrency: int, timeout: float | None, transport: httpx.BaseTransport | None) -> httpx.Client:
    """An httpx client that never retries (retries=0 on the transport; no redirects followed)."""
    # local import: httpx costs ~75 ms to import; the URL config imports the providers, a client is built later
    import httpx

    seconds = float(timeout if timeout is not None else settings.PROVIDER_TIMEOUT_SECONDS)
    if transport is None:
        transport = httpx.HTTPTransport(
            retries=0,
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        )
    return httpx.Client(transport=transport, timeout=httpx.Timeout(seconds), follow_redirects=False)


def grade_answer_schema(labels: tuple[str, ...]) -> dict[str, Any]:
    """Strict JSON schema of a stated distribution per item (every property required, no extras)."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["grades"],
        "properties": {
            "grades": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["item", "grade", "probabilities"],
                    "properties": {
                        "item": {"type": "integer"},
                        "grade": {"type": "string", "enum": list(labels)},
                        "probabilities": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": list(labels),
                            "properties": {label: {"type": "number"} for label in labels},
                        },
                    },
                },
            }
        },
    }


def answer_instructions(*, method: str, n: int, labels: tuple[str, ...]) -> str:
    """The answer-format paragraph the provider layer appends (it owns the parsing, so it owns the format)."""
    label_list = ", ".join(labels)
    if method == "logprobs":
        return (
            f"\n\nAnswer with exactly {n} grade{'s' if n > 1 else ''}, one per item in the order given, "
            f"each one of {label_list}" + (", separated by commas" if n > 1 else "") + ", and nothing else."
        )
    return (
        f"\n\nAnswer for each of the {n} items in order (item numbers 1 to {n}): the grade (one of {label_list}) "
        "and your probability for each grade (non-negative, summing to 1)."
    )


def grades_from_stated(data: Any, *, n: int, labels: tuple[str, ...]) -> tuple[GradeDistribution, ...]:
    """Validate a structured grade answer and align it to the n items (item numbers 1..n in order)."""
    # local import: jsonschema costs ~0.4 s to import; pages import the provider layer and validate no answer
    import jsonschema

    try:
        jsonschema.validate(data, grade_answer_schema(labels))
    except jsonschema.ValidationError as error:
        path = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise ValidationFailed(f"answer does not match the grade schema at {path}: {error.message}") from None
    items = data["grades"]
    numbers = [g["item"] for g in items]
    if numbers != list(range(1, n + 1)):
        raise ValidationFailed(f"answer grades items {numbers}, expected exactly 1..{n} in order (unalignable)")
    out = []
    for i, g in enumerate(items, start=1):
        try:
            probs, mass = renormalise([g["probabilities"][label] for label in labels])
        except ValueError as error:
            raise ValidationFailed(f"item {i}: {error}") from None
        out.append(GradeDistribution(probs=probs, captured_mass=mass, grade=labels.index(g["grade"])))
    return tuple(out)


def validate_structured(data: Any, schema: dict[str, Any]) -> dict[str, Any]:
    # local import: jsonschema costs ~0.4 s to import; pages import the provider layer and validate no answer
    import jsonschema

    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as error:
        path = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise ValidationFailed(f"answer does not match schema at {path}: {error.message}") from None
    return data


def load_json(text: str, *, what: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError) as error:
        raise ValidationFailed(f"{what} is not valid JSON ({error.msg if hasattr(error, 'msg') else error})") from None


def provider_message(body_text: str, *, limit: int = 500) -> str:
    """The provider's own error message from an error body, in the shapes the providers use.

    OpenAI / OpenRouter ``{"error": {"message": ...}}``, Anthropic ``{"type": "error", "error":
    {"type": ..., "message": ...}}``, vLLM ``{"message": ...}``, Ollama ``{"error": "..."}``; any other
    body is quoted as text. ``body_text`` is already redacted by the client.
    """
    try:
        data = json.loads(body_text)
    except (json.JSONDecodeError, ValueError):
        data = None
    message = ""
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            message = str(error.get("message") or "")
            kind = error.get("type") or error.get("code")
            if isinstance(kind, str) and kind and message and kind not in message:  # numeric codes repeat the status
                message = f"{message} ({kind})"
        elif isinstance(error, str):
            message = error
        elif isinstance(data.get("message"), str):
            message = data["message"]
    if not message:
        message = body_text.strip()
    message = " ".join(message.split())
    return message[:limit] + ("…" if len(message) > limit else "")


# An answer that means every later request of the ledger would fail the same way: the run stops
# at the first one instead of spending the budget on a wall.
FATAL_HTTP = {401: "authentication refused", 402: "payment required", 403: "access refused",
              404: "unknown model or endpoint"}
UNKNOWN_MODEL = re.compile(
    r"model.{0,120}(not (a )?valid|not found|does not exist|unknown|invalid|not available|no endpoints)"
    r"|(not (a )?valid|invalid|unknown) model|model_not_found", re.I | re.S)


# What servers answer to a request longer than the model's context window: OpenAI, vLLM and llama-cpp-python
# ("This model's maximum context length is N tokens", code context_length_exceeded), llama.cpp's llama-server
# ("the request exceeds the available context size", exceed_context_size_error). Said by name on the receipt, and
# never a reason to stop the ledger: a shorter request of the same run may fit.
CONTEXT_EXCEEDED = re.compile(
    r"context_length_exceeded|maximum context length|exceeds? (the )?(available )?context|exceed_context_size"
    r"|context window", re.I)
CONTEXT_EXCEEDED_PREFIX = "longer than the model's context window"


def http_error(outcome: SendOutcome) -> str:
    """The receipt's error for a non-2xx answer: the status and the provider's own message, named when the
    request did not fit the model's context."""
    message = provider_message(outcome.body_text)
    error = f"HTTP {outcome.http_status}" + (f": {message}" if message else "")
    return f"{CONTEXT_EXCEEDED_PREFIX}: {error}" if CONTEXT_EXCEEDED.search(message) else error


# A server that refuses the form of ``response_format`` (llama-cpp-python's server answers OpenAI's json_schema form
# with HTTP 500 "Input should be 'text' or 'json_object'"): every structured request of the ledger would fail alike.
SCHEMA_FORM_REFUSED = re.compile(r"response_format.{0,300}?(json_object|json_schema)", re.I | re.S)
SCHEMA_FORM_HINT = ('; if the server takes a schema as {"type": "json_object", "schema": ...} (llama-cpp-python\'s '
                    "server), list its origin in OPENAI_COMPATIBLE_JSON_OBJECT_ORIGINS")


def fatal_reason(outcome: SendOutcome) -> str:
    """Why this outcome means no request of the ledger can succeed ('' when it does not)."""
    if not outcome.sent:
        return outcome.error or "not sent"
    if outcome.http_status is None:
        return ""
    message = provider_message(outcome.body_text)
    if CONTEXT_EXCEEDED.search(message):
        return ""
    if outcome.http_status in FATAL_HTTP:
        return f"{FATAL_HTTP[outcome.http_status]}: HTTP {outcome.http_status}: {message}"
    if outcome.http_status in (400, 422) and UNKNOWN_MODEL.search(message):
        return f"unknown model: HTTP {outcome.http_status}: {message}"
    if outcome.http_status >= 400 and SCHEMA_FORM_REFUSED.search(message):
        return f"answer format refused: HTTP {outcome.http_status}: {message}{SCHEMA_FORM_HINT}"
    return ""


class Client(ABC):
    """Prepare -> send once -> validate. Subclasses fill in the provider's shapes."""

    name = ""

    def __init__(self, *, model_id: str) -> None:
        if not model_id:
            raise ProviderError("a pinned model id is required")
        self.model_id = model_id

    @abstractmethod
    def prepare_grades(self, spec: GradeSpec, *, method: str | None = None) -> PreparedRequest: ...

    def prepare_structured(self, spec: StructuredSpec) -> PreparedRequest:
        raise ProviderError(f"{self.name} cannot answer structured requests")

    @abstractmethod
    def send(self, prepared: PreparedRequest) -> SendOutcome: ...

    @abstractmethod
    def validate(self, prepared: PreparedRequest, outcome: SendOutcome) -> Parse:
        """Turn a 2xx answer into a Parse, or raise ValidationFailed naming what is wrong."""

    def usage(self, body_text: str) -> tuple[dict | None, int | None]:
        """(usage as reported, reported input tokens) from any response body; (None, None) if absent."""
        return None, None

    def close(self) -> None:  # noqa: B027 - optional hook
        pass


class HttpClient(Client):
    """A client that POSTs JSON over httpx, once."""

    def __init__(
        self, *, model_id: str, base_url: str, concurrency: int = 4,
        transport: httpx.BaseTransport | None = None, timeout: float | None = None,
    ) -> None:
        super().__init__(model_id=model_id)
        self.base_url = check_base_url(base_url)
        self._http = http_client(concurrency=concurrency, timeout=timeout, transport=transport)

    @abstractmethod
    def auth_headers(self) -> dict[str, str]:
        """Credential headers, added at send time only (never part of the request key or receipt)."""

    def send(self, prepared: PreparedRequest) -> SendOutcome:
        # local import: httpx costs ~75 ms to import; pages import the provider layer and send nothing
        import httpx

        start = time.perf_counter()
        try:
            headers = {"content-type": "application/json", "accept": "application/json", **self.auth_headers()}
        except ProviderError as error:
            # No key: the body never left this process, so nothing was spent.
            return SendOutcome(sent=False, answered=False, http_status=None, body_text="",
                               latency_ms=(time.perf_counter() - start) * 1000, error=f"not sent: {error}")
        status: int | None = None
        simulated = False
        chunks: list[bytes] = []
        try:
            with self._http.stream("POST", prepared.url, content=prepared.body_bytes, headers=headers) as response:
                status = response.status_code
                simulated = SIMULATED_HEADER in response.headers
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol) as error:
            # The request never reached the server (refused, unknown host): nothing was processed.
            return SendOutcome(
                sent=False, answered=False, http_status=None, body_text="",
                latency_ms=(time.perf_counter() - start) * 1000,
                error=redact(f"not sent: endpoint unreachable: {type(error).__name__}: {error}"),
            )
        except httpx.HTTPError as error:
            latency = (time.perf_counter() - start) * 1000
            body = redact(b"".join(chunks).decode("utf-8", errors="replace"))[:MAX_STORED_BODY]
            if status is not None:
                # Headers arrived, the body was cut: an answer we cannot use.
                return SendOutcome(
                    sent=True, answered=True, http_status=status, body_text=body, latency_ms=latency,
                    error=redact(f"incomplete response body: {type(error).__name__}: {error}"), simulated=simulated,
                )
            # Sent, no answer (read timeout, connection dropped): the provider may have processed it.
            return SendOutcome(
                sent=True, answered=False, http_status=None, body_text=body, latency_ms=latency,
                error=redact(f"no answer: {type(error).__name__}: {error}"),
            )
        body = redact(b"".join(chunks).decode("utf-8", errors="replace"))
        return SendOutcome(
            sent=True, answered=True, http_status=status, body_text=body[:MAX_STORED_BODY],
            latency_ms=(time.perf_counter() - start) * 1000,
            error="" if len(body) <= MAX_STORED_BODY else f"response body cut at {MAX_STORED_BODY} characters",
            simulated=simulated,
        )

    def close(self) -> None:
        self._http.close()
