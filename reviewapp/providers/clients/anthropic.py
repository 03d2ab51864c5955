"""Anthropic Messages API: structured answers through one forced tool call.

Headers ``x-api-key`` and ``anthropic-version: 2023-06-01``. There are no logprobs,
so a grade distribution is the model's stated one (method "structured"). The
reported input is ``usage.input_tokens + cache_creation_input_tokens +
cache_read_input_tokens``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from reviewapp.providers.clients.base import (
    HttpClient,
    answer_instructions,
    grade_answer_schema,
    grades_from_stated,
    load_json,
    url_origin,
    validate_structured,
)
from reviewapp.providers.clients.base import key_may_go_to as base_key_may_go_to
from reviewapp.providers.types import (
    KIND_GRADES,
    KIND_STRUCTURED,
    METHOD_STRUCTURED,
    GradeSpec,
    Parse,
    PreparedRequest,
    ProviderError,
    SendOutcome,
    StructuredSpec,
    ValidationFailed,
)

ANTHROPIC_VERSION = "2023-06-01"
INPUT_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def key_may_go_to(base_url: str) -> bool:
    """ANTHROPIC_API_KEY goes to ANTHROPIC_BASE_URL's origin, the listed ones and this machine."""
    return base_key_may_go_to(base_url, configured=settings.ANTHROPIC_BASE_URL,
                              listed=getattr(settings, "ANTHROPIC_KEY_ORIGINS", []))


class AnthropicClient(HttpClient):
    name = "anthropic"

    def __init__(self, *, model_id: str, base_url: str = "", **kwargs: Any) -> None:
        super().__init__(model_id=model_id, base_url=base_url or settings.ANTHROPIC_BASE_URL, **kwargs)
        self.url = f"{self.base_url}/v1/messages"

    def auth_headers(self) -> dict[str, str]:
        key = settings.PROVIDER_KEYS.get("anthropic", "")
        if not key:
            raise ProviderError("ANTHROPIC_API_KEY is not set in the server environment")
        if not key_may_go_to(self.base_url):
            # Nothing leaves: the key is never sent to a base URL typed for a run on another host.
            raise ProviderError(f"ANTHROPIC_API_KEY goes only to ANTHROPIC_BASE_URL's origin, the origins in "
                                f"ANTHROPIC_KEY_ORIGINS and this machine, not to {url_origin(self.base_url)}")
        return {"x-api-key": key, "anthropic-version": ANTHROPIC_VERSION}

    def _body(self, *, system: str, user: str, tool: str, schema: dict, max_tokens: int) -> dict[str, Any]:
        return {
            "model": self.model_id,
            "max_tokens": max_tokens,
            "temperature": 0,
            "system": system,
            "messages": [{"role": "user", "content": user}],
            "tools": [{"name": tool, "description": "Record the answer.", "input_schema": schema}],
            "tool_choice": {"type": "tool", "name": tool},
        }

    def prepare_grades(self, spec: GradeSpec, *, method: str | None = None) -> PreparedRequest:
        if method not in (None, METHOD_STRUCTURED):
            raise ProviderError("the Anthropic API has no logprobs; grades use the structured method")
        n = len(spec.items)
        user = spec.user + answer_instructions(method=METHOD_STRUCTURED, n=n, labels=spec.labels)
        body = self._body(system=spec.system, user=user, tool="record_grades",
                          schema=grade_answer_schema(spec.labels), max_tokens=128 + 96 * n)
        expect = {"kind": KIND_GRADES, "method": METHOD_STRUCTURED, "n": n, "labels": list(spec.labels),
                  "tool": "record_grades"}
        return PreparedRequest(provider=self.name, model_id=self.model_id, url=self.url, body=body, expect=expect)

    def prepare_structured(self, spec: StructuredSpec) -> PreparedRequest:
        body = self._body(system=spec.system, user=spec.user, tool=spec.schema_name, schema=spec.schema,
                          max_tokens=spec.max_tokens)
        expect = {"kind": KIND_STRUCTURED, "method": METHOD_STRUCTURED, "schema": spec.schema, "tool": spec.schema_name}
        return PreparedRequest(provider=self.name, model_id=self.model_id, url=self.url, body=body, expect=expect)

    def usage(self, body_text: str) -> tuple[dict | None, int | None]:
        try:
            data = load_json(body_text, what="response")
        except ValidationFailed:
            return None, None
        usage = data.get("usage") if isinstance(data, dict) else None
        if not isinstance(usage, dict) or not isinstance(usage.get("input_tokens"), int):
            return (usage if isinstance(usage, dict) else None), None
        total = sum(int(usage.get(f) or 0) for f in INPUT_FIELDS)
        return usage, total

    def validate(self, prepared: PreparedRequest, outcome: SendOutcome) -> Parse:
        data = load_json(outcome.body_text, what="response body")
        if not isinstance(data, dict) or data.get("type") != "message":
            raise ValidationFailed("response is not a Messages API message")
        if data.get("stop_reason") == "max_tokens":
            raise ValidationFailed("answer truncated (stop_reason=max_tokens)")
        tool = prepared.expect["tool"]
        calls = [b for b in data.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"
                 and b.get("name") == tool]
        if len(calls) != 1:
            raise ValidationFailed(f"expected exactly one tool_use block named {tool!r}, found {len(calls)}")
        answer = calls[0].get("input")
        usage, reported = self.usage(outcome.body_text)
        if prepared.expect["kind"] == KIND_STRUCTURED:
            return Parse(kind=KIND_STRUCTURED, method=METHOD_STRUCTURED,
                         data=validate_structured(answer, prepared.expect["schema"]),
                         usage=usage, reported_input_tokens=reported)
        grades = grades_from_stated(answer, n=prepared.expect["n"], labels=tuple(prepared.expect["labels"]))
        return Parse(kind=KIND_GRADES, method=METHOD_STRUCTURED, grades=grades, usage=usage,
                     reported_input_tokens=reported)
