"""OpenAI-compatible chat completions: OpenRouter, vLLM, llama.cpp server, Ollama, LM Studio, gateways.

The base URL and model id are pinned per run (its ledger); a server that needs no key gets none
(``OPENAI_COMPATIBLE_API_KEY`` is sent only to its configured origins, see ``key_may_go_to``).

Grades by logprobs: ``logprobs: true, top_logprobs: 20, temperature: 0`` and a
short answer ("2,0,3,1"); each item's distribution is read from the top_logprobs
at ITS grade token's position, over the labels, renormalised, with the captured
mass kept (one item: at position 0, whatever token was sampled there). Models without
logprobs use the structured method (``response_format`` json_schema, strict), recorded as
such. On OpenRouter every request carries ``provider: {require_parameters: true}`` so a
backend that would ignore logprobs or the schema is never silently chosen.
``usage.prompt_tokens`` is the reported input.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from django.conf import settings

from reviewapp.providers.clients import base
from reviewapp.providers.clients.base import (
    HttpClient,
    answer_instructions,
    grade_answer_schema,
    grades_from_stated,
    load_json,
    validate_structured,
)
from reviewapp.providers.local.distributions import from_top_logprobs
from reviewapp.providers.types import (
    KIND_GRADES,
    KIND_STRUCTURED,
    METHOD_LOGPROBS,
    METHOD_STRUCTURED,
    GradeDistribution,
    GradeSpec,
    Parse,
    PreparedRequest,
    ProviderError,
    SendOutcome,
    StructuredSpec,
    ValidationFailed,
)

TOP_LOGPROBS = 20
SEPARATORS = {"", ","}


def key_may_go_to(base_url: str) -> bool:
    """OPENAI_COMPATIBLE_API_KEY goes to OPENAI_COMPATIBLE_BASE_URL's origin, the listed ones and this machine."""
    return base.key_may_go_to(base_url, configured=settings.OPENAI_COMPATIBLE_BASE_URL,
                              listed=getattr(settings, "OPENAI_COMPATIBLE_KEY_ORIGINS", []))


def takes_json_object_schema(base_url: str) -> bool:
    """Does the server at ``base_url`` take a schema as ``{"type": "json_object", "schema": ...}`` (llama-cpp-python's
    server) rather than OpenAI's ``json_schema`` form? Listed per origin in OPENAI_COMPATIBLE_JSON_OBJECT_ORIGINS."""
    listed = {base.url_origin(o) for o in getattr(settings, "OPENAI_COMPATIBLE_JSON_OBJECT_ORIGINS", []) if o.strip()}
    return base.url_origin(base_url) in listed


def is_openrouter(base_url: str) -> bool:
    host = (urlparse(base_url).hostname or "").lower()
    return host == "openrouter.ai" or host.endswith(".openrouter.ai")


class OpenAICompatibleClient(HttpClient):
    name = "openai_compatible"

    def __init__(self, *, model_id: str, base_url: str = "", openrouter: bool | None = None, **kwargs: Any) -> None:
        super().__init__(model_id=model_id, base_url=base_url or settings.OPENAI_COMPATIBLE_BASE_URL, **kwargs)
        self.openrouter = is_openrouter(self.base_url) if openrouter is None else openrouter
        self.json_object_schema = takes_json_object_schema(self.base_url)
        self.url = f"{self.base_url}/chat/completions"

    def _key(self) -> str:
        keys = settings.PROVIDER_KEYS
        if self.openrouter:
            key = keys.get("openrouter", "")
            if not key:
                raise ProviderError("OPENROUTER_API_KEY is not set in the server environment")
            return key
        # Self-hosted servers (vLLM, llama.cpp, Ollama, LM Studio) often need no key.
        return keys.get("openai_compatible", "") if key_may_go_to(self.base_url) else ""

    def auth_headers(self) -> dict[str, str]:
        key = self._key()
        return {"authorization": f"Bearer {key}"} if key else {}

    def _base_body(self, system: str, user: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0,
        }
        if self.openrouter:
            body["provider"] = {"require_parameters": True}
        return body

    def _response_format(self, name: str, schema: dict[str, Any]) -> dict[str, Any]:
        """The JSON-schema answer format in the server's form (part of the body, so of the request key)."""
        if self.json_object_schema:
            return {"type": "json_object", "schema": schema}
        return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}

    def prepare_grades(self, spec: GradeSpec, *, method: str | None = None) -> PreparedRequest:
        method = method or METHOD_LOGPROBS
        n = len(spec.items)
        user = spec.user + answer_instructions(method=method, n=n, labels=spec.labels)
        body = self._base_body(spec.system, user)
        if method == METHOD_LOGPROBS:
            # One token per grade, a separator between; one spare token shows an extra grade if the model adds one.
            body.update({"max_tokens": 1 if n == 1 else 2 * n, "logprobs": True, "top_logprobs": TOP_LOGPROBS})
        elif method == METHOD_STRUCTURED:
            body.update({"max_tokens": 64 + 80 * n,
                         "response_format": self._response_format("grades", grade_answer_schema(spec.labels))})
        else:
            raise ProviderError(f"openai_compatible grades by logprobs or structured, not {method!r}")
        expect = {"kind": KIND_GRADES, "method": method, "n": n, "labels": list(spec.labels)}
        return PreparedRequest(provider=self.name, model_id=self.model_id, url=self.url, body=body, expect=expect)

    def prepare_structured(self, spec: StructuredSpec) -> PreparedRequest:
        body = self._base_body(spec.system, spec.user)
        body.update({"max_tokens": spec.max_tokens, "response_format": self._response_format(spec.schema_name,
                                                                                                spec.schema)})
        expect = {"kind": KIND_STRUCTURED, "method": METHOD_STRUCTURED, "schema": spec.schema}
        return PreparedRequest(provider=self.name, model_id=self.model_id, url=self.url, body=body, expect=expect)

    def usage(self, body_text: str) -> tuple[dict | None, int | None]:
        try:
            data = load_json(body_text, what="response")
        except ValidationFailed:
            return None, None
        usage = data.get("usage") if isinstance(data, dict) else None
        if not isinstance(usage, dict):
            return None, None
        prompt = usage.get("prompt_tokens")
        return usage, int(prompt) if isinstance(prompt, int) and prompt >= 0 else None

    def validate(self, prepared: PreparedRequest, outcome: SendOutcome) -> Parse:
        data = load_json(outcome.body_text, what="response body")
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise ValidationFailed("response has no choices[0].message") from None
        usage, reported = self.usage(outcome.body_text)
        expect = prepared.expect
        if expect["kind"] == KIND_STRUCTURED:
            content = _structured_content(choice, message)
            parsed = validate_structured(load_json(content, what="message content"), expect["schema"])
            return Parse(kind=KIND_STRUCTURED, method=METHOD_STRUCTURED, data=parsed, usage=usage,
                         reported_input_tokens=reported)
        labels = tuple(expect["labels"])
        if expect["method"] == METHOD_STRUCTURED:
            content = _structured_content(choice, message)
            grades = grades_from_stated(load_json(content, what="message content"), n=expect["n"], labels=labels)
        else:
            grades = _grades_from_logprobs(choice, n=expect["n"], labels=labels)
        return Parse(kind=KIND_GRADES, method=expect["method"], grades=grades, usage=usage,
                     reported_input_tokens=reported)


def _structured_content(choice: dict, message: dict) -> str:
    if message.get("refusal"):
        raise ValidationFailed(f"model refused: {str(message['refusal'])[:200]}")
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValidationFailed("message content is empty")
    if choice.get("finish_reason") == "length":
        raise ValidationFailed("answer truncated (finish_reason=length)")
    return content


def _grades_from_logprobs(choice: dict, *, n: int, labels: tuple[str, ...]) -> tuple[GradeDistribution, ...]:
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content:
        raise ValidationFailed("answer carries no logprobs (model or backend ignored them; use structured)")
    label_set = set(labels)
    first = content[0] if isinstance(content[0], dict) else {}
    if n == 1 and str(first.get("token", "")).strip() not in label_set:
        # One item, one token asked for: position 0 is the grade's position whatever was sampled there (a small
        # model may start "The ..."). Its distribution over the labels is read from that position's top_logprobs;
        # the captured mass says how little of the model's probability went to a grade.
        return (_position_distribution(first, position=0, labels=labels, grade=None),)
    grades: list[GradeDistribution] = []
    for position, entry in enumerate(content):
        token = str(entry.get("token", "")).strip()
        if token in label_set:
            if len(grades) == n:
                raise ValidationFailed(f"answer has more than {n} grades (token {position}); cannot align to items")
            grades.append(_position_distribution(entry, position=position, labels=labels, grade=labels.index(token)))
        elif token in SEPARATORS:
            continue
        elif len(grades) < n:
            raise ValidationFailed(
                f"unexpected token {token[:20]!r} at position {position} before grade {len(grades) + 1}"
            )
    if len(grades) != n:
        raise ValidationFailed(f"answer has {len(grades)} grades for {n} items; cannot align to items")
    return tuple(grades)


def _position_distribution(
    entry: dict, *, position: int, labels: tuple[str, ...], grade: int | None,
) -> GradeDistribution:
    """The labels' renormalised distribution at one answer position; ``grade`` None: the most probable label."""
    top = entry.get("top_logprobs")
    if not isinstance(top, list) or not top:
        raise ValidationFailed(f"grade token at position {position} has no top_logprobs")
    try:
        probs, mass = from_top_logprobs(top, labels)
    except (ValueError, KeyError, TypeError) as error:
        raise ValidationFailed(f"grade token at position {position}: {error}") from None
    return GradeDistribution(probs=probs, captured_mass=mass,
                             grade=grade if grade is not None else max(range(len(probs)), key=probs.__getitem__))
