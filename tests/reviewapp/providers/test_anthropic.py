"""The Anthropic Messages client against a real loopback server."""

from __future__ import annotations

import json

import pytest

from reviewapp.providers.clients.anthropic import AnthropicClient
from reviewapp.providers.loopback import LoopbackServer
from reviewapp.providers.types import GradeSpec, ProviderError, StructuredSpec, ValidationFailed
from tests.reviewapp.providers.conftest import fixture_bytes, fixture_reply

SPEC = GradeSpec(system="Grade relevance.", user="Issue and items", query="q", items=("a", "b", "c", "d"))


def _client(server, **kwargs) -> AnthropicClient:
    return AnthropicClient(model_id="claude-sonnet-4-20250514", base_url=server.url, **kwargs)


def test_it_sends_the_messages_api_headers_and_a_forced_tool(planted_keys):
    with LoopbackServer(lambda p, h, b: fixture_reply("anthropic_message_tool_use.json")) as server:
        client = _client(server)
        prepared = client.prepare_grades(SPEC)
        parse = client.validate(prepared, client.send(prepared))
    request = server.requests[0]
    assert request["path"] == "/v1/messages"
    assert request["headers"]["x-api-key"] == planted_keys["anthropic"]
    assert request["headers"]["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request["headers"]
    body = json.loads(request["body"])
    assert body["model"] == "claude-sonnet-4-20250514"
    assert body["system"] == "Grade relevance."
    assert body["tool_choice"] == {"type": "tool", "name": "record_grades"}
    assert body["tools"][0]["input_schema"]["required"] == ["grades"]
    assert parse.method == "structured"
    assert [g.grade for g in parse.grades] == [3, 0, 2, 1]
    assert parse.grades[2].probs == pytest.approx((0.05, 0.2, 0.55, 0.2))


def test_reported_input_includes_cache_tokens(planted_keys):
    with LoopbackServer(lambda p, h, b: fixture_reply("anthropic_message_tool_use.json")) as server:
        client = _client(server)
        prepared = client.prepare_grades(SPEC)
        parse = client.validate(prepared, client.send(prepared))
    assert parse.reported_input_tokens == 1520 + 380 + 1024
    assert parse.usage["output_tokens"] == 142


def test_usage_without_cache_fields_counts_input_tokens_only(planted_keys):
    client = AnthropicClient(model_id="m", base_url="http://x.test")
    assert client.usage(fixture_bytes("anthropic_message_max_tokens.json").decode())[1] == 1520


def test_an_answer_cut_by_max_tokens_is_invalid(planted_keys):
    with LoopbackServer(lambda p, h, b: fixture_reply("anthropic_message_max_tokens.json")) as server:
        client = _client(server)
        prepared = client.prepare_grades(SPEC)
        outcome = client.send(prepared)
    with pytest.raises(ValidationFailed, match="max_tokens"):
        client.validate(prepared, outcome)


@pytest.mark.parametrize("name, status", [("anthropic_error_529.json", 529), ("anthropic_error_429.json", 429)])
def test_overload_and_rate_limit_answers_are_returned_once(planted_keys, name, status):
    with LoopbackServer(lambda p, h, b: fixture_reply(name, status=status)) as server:
        outcome = _client(server).send(_client(server).prepare_grades(SPEC))
    assert outcome.http_status == status
    assert json.loads(outcome.body_text)["type"] == "error"
    assert len(server.requests) == 1


def test_no_logprobs_method_exists_for_anthropic(planted_keys):
    with pytest.raises(ProviderError, match="no logprobs"):
        AnthropicClient(model_id="m", base_url="http://x.test").prepare_grades(SPEC, method="logprobs")


def test_a_missing_key_refuses_before_sending(settings, loopback):
    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}
    client = _client(loopback)
    outcome = client.send(client.prepare_grades(SPEC))
    assert not outcome.sent and not outcome.answered and "ANTHROPIC_API_KEY is not set" in outcome.error
    assert loopback.requests == []


def test_structured_requests_use_the_callers_schema_as_tool(planted_keys, loopback):
    schema = {"type": "object", "additionalProperties": False, "required": ["verdict", "reason"],
              "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}, "reason": {"type": "string"}}}
    client = _client(loopback)
    prepared = client.prepare_structured(StructuredSpec(system="s", user="u", schema_name="verdict", schema=schema))
    assert prepared.body["tool_choice"]["name"] == "verdict"
    assert prepared.body["tools"][0]["input_schema"] == schema
