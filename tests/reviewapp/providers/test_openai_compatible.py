"""The OpenAI-compatible client against a real loopback server and httpx.MockTransport."""

from __future__ import annotations

import json
import math

import httpx
import pytest

from reviewapp.providers.clients import client_for
from reviewapp.providers.clients.openai_compatible import OpenAICompatibleClient
from reviewapp.providers.loopback import LoopbackServer, Reply
from reviewapp.providers.types import GradeSpec, ProviderError, StructuredSpec, ValidationFailed
from tests.reviewapp.providers.conftest import fixture_bytes, fixture_json, fixture_reply

SPEC = GradeSpec(system="Grade relevance.", user="Issue: deposits.\nItems: ...", query="q",
                 items=("p1", "p2", "p3", "p4"))


def _client(server, **kwargs) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(model_id="openai/gpt-4o-mini", base_url=server.url + "/v1", **kwargs)


def test_it_sends_logprob_parameters_and_the_bearer_key(planted_keys, settings):
    with LoopbackServer(lambda p, h, b: fixture_reply("openai_chat_logprobs.json")) as server:
        settings.OPENAI_COMPATIBLE_KEY_ORIGINS = [server.url]  # the key goes to its configured origins only
        client = _client(server)
        prepared = client.prepare_grades(SPEC)
        outcome = client.send(prepared)
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer " + planted_keys["openai_compatible"]
    assert request["headers"]["content-type"] == "application/json"
    body = json.loads(request["body"])
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and body["temperature"] == 0
    assert body["model"] == "openai/gpt-4o-mini"
    assert body["max_tokens"] == 8  # 4 grades, 3 separators, one spare
    assert "provider" not in body  # not OpenRouter
    assert "exactly 4 grades" in body["messages"][1]["content"]
    assert request["body"] == prepared.body_bytes  # exactly the hashed bytes went out
    assert planted_keys["openai_compatible"] not in json.dumps(prepared.body)
    assert outcome.http_status == 200


def test_openrouter_requests_require_parameters(planted_keys):
    with LoopbackServer(lambda p, h, b: fixture_reply("openai_chat_logprobs.json")) as server:
        client = _client(server, openrouter=True)
        client.send(client.prepare_grades(SPEC))
        client.send(client.prepare_grades(SPEC, method="structured"))
    for request in server.requests:
        assert json.loads(request["body"])["provider"] == {"require_parameters": True}
        assert request["headers"]["authorization"] == "Bearer " + planted_keys["openrouter"]


def test_openrouter_without_a_key_refuses_before_sending(settings):
    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}
    client = OpenAICompatibleClient(model_id="m", base_url="https://openrouter.ai/api/v1")
    outcome = client.send(client.prepare_grades(SPEC))
    assert not outcome.sent and not outcome.answered and "OPENROUTER_API_KEY is not set" in outcome.error


def test_each_item_reads_its_own_grade_position_renormalised_with_mass(planted_keys):
    with LoopbackServer(lambda p, h, b: fixture_reply("openai_chat_logprobs.json")) as server:
        client = _client(server)
        prepared = client.prepare_grades(SPEC)
        parse = client.validate(prepared, client.send(prepared))
    raw = fixture_json("openai_chat_logprobs.json")["choices"][0]["logprobs"]["content"]
    grade_positions = [0, 2, 4, 6]
    assert [g.grade for g in parse.grades] == [3, 0, 2, 1]
    for grade, position in zip(parse.grades, grade_positions, strict=True):
        weights = [0.0] * 4
        for entry in raw[position]["top_logprobs"]:
            if entry["token"].strip() in "0123" and entry["token"].strip():
                weights[int(entry["token"].strip())] += math.exp(entry["logprob"])
        assert grade.captured_mass == pytest.approx(sum(weights))
        assert grade.probs == pytest.approx([w / sum(weights) for w in weights])
        assert sum(grade.probs) == pytest.approx(1.0)
    # " 3" and "3" are one label: their mass adds up
    assert parse.grades[0].captured_mass < 1.0
    assert parse.method == "logprobs"
    assert parse.reported_input_tokens == 1873


def test_an_answer_without_logprobs_is_a_validation_failure(planted_keys):
    with LoopbackServer(lambda p, h, b: fixture_reply("openai_chat_no_logprobs.json")) as server:
        client = _client(server)
        prepared = client.prepare_grades(SPEC)
        outcome = client.send(prepared)
    with pytest.raises(ValidationFailed, match="no logprobs"):
        client.validate(prepared, outcome)
    assert client.usage(outcome.body_text)[1] == 1902


def test_structured_fallback_sends_a_strict_schema_and_records_the_method(planted_keys):
    with LoopbackServer(lambda p, h, b: fixture_reply("openai_chat_structured.json")) as server:
        client = _client(server)
        prepared = client.prepare_grades(SPEC, method="structured")
        parse = client.validate(prepared, client.send(prepared))
    body = json.loads(server.requests[0]["body"])
    assert "logprobs" not in body
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False
    assert parse.method == "structured"
    assert [g.grade for g in parse.grades] == [3, 0, 2, 1]
    assert parse.grades[0].probs == pytest.approx((0.02, 0.03, 0.15, 0.8))
    assert parse.reported_input_tokens == 2210


def _mock_client(handler) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(model_id="m", base_url="http://model.test/v1",
                                  transport=httpx.MockTransport(handler))


def _logprob_answer(tokens: list[str]) -> dict:
    content = [{"token": t, "logprob": -0.1, "top_logprobs": [{"token": t, "logprob": -0.1}]} for t in tokens]
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": "".join(tokens)},
                         "logprobs": {"content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10}}


@pytest.mark.parametrize("tokens, problem", [
    (["3", ",", "0", ",", "2"], "3 grades for 4 items"),
    (["3", ",", "0", ",", "2", ",", "1", ",", "2"], "more than 4 grades"),
    (["Sure", "3", ",", "0", ",", "2", ",", "1"], "unexpected token"),
])
def test_a_batch_that_cannot_be_aligned_is_refused(planted_keys, tokens, problem):
    client = _mock_client(lambda request: httpx.Response(200, json=_logprob_answer(tokens)))
    prepared = client.prepare_grades(SPEC)
    with pytest.raises(ValidationFailed, match=problem):
        client.validate(prepared, client.send(prepared))


def test_structured_answers_with_wrong_item_numbers_are_unalignable(planted_keys):
    data = json.loads(fixture_json("openai_chat_structured.json")["choices"][0]["message"]["content"])
    data["grades"][1]["item"] = 3
    answer = fixture_json("openai_chat_structured.json")
    answer["choices"][0]["message"]["content"] = json.dumps(data)
    client = _mock_client(lambda request: httpx.Response(200, json=answer))
    prepared = client.prepare_grades(SPEC, method="structured")
    with pytest.raises(ValidationFailed, match="unalignable"):
        client.validate(prepared, client.send(prepared))


def test_generic_structured_requests_validate_against_the_callers_schema(planted_keys):
    schema = {"type": "object", "additionalProperties": False, "required": ["quotes"],
              "properties": {"quotes": {"type": "array", "items": {"type": "string"}}}}
    good = {"choices": [{"message": {"content": json.dumps({"quotes": ["a", "b"]})}, "finish_reason": "stop"}]}
    bad = {"choices": [{"message": {"content": json.dumps({"quotes": "a"})}, "finish_reason": "stop"}]}
    for answer, ok in ((good, True), (bad, False)):
        client = _mock_client(lambda request, answer=answer: httpx.Response(200, json=answer))
        prepared = client.prepare_structured(StructuredSpec(system="s", user="u", schema_name="quotes", schema=schema))
        assert prepared.body["response_format"]["json_schema"]["name"] == "quotes"
        if ok:
            assert client.validate(prepared, client.send(prepared)).data == {"quotes": ["a", "b"]}
        else:
            with pytest.raises(ValidationFailed, match="quotes"):
                client.validate(prepared, client.send(prepared))


@pytest.mark.parametrize("name, status", [("openai_error_429.json", 429), ("openai_error_500.json", 500)])
def test_error_statuses_come_back_once_with_their_raw_body(planted_keys, name, status):
    with LoopbackServer(lambda p, h, b: fixture_reply(name, status=status)) as server:
        client = _client(server)
        outcome = client.send(client.prepare_grades(SPEC))
    assert outcome.http_status == status
    assert outcome.body_text == fixture_bytes(name).decode()
    assert len(server.requests) == 1  # no retry


def test_a_truncated_body_is_recorded_as_incomplete(planted_keys):
    body = fixture_bytes("openai_chat_logprobs.json")
    with LoopbackServer(lambda p, h, b: Reply(body=body, truncate_to=200)) as server:
        client = _client(server)
        outcome = client.send(client.prepare_grades(SPEC))
    assert outcome.http_status == 200 and outcome.answered
    assert "incomplete" in outcome.error
    assert len(server.requests) == 1


def test_malformed_json_fails_validation(planted_keys):
    with LoopbackServer(lambda p, h, b: Reply(body=b'{"choices": [ {"message": ')) as server:
        client = _client(server)
        prepared = client.prepare_grades(SPEC)
        outcome = client.send(prepared)
    with pytest.raises(ValidationFailed, match="not valid JSON"):
        client.validate(prepared, outcome)


def test_a_timeout_is_sent_but_unanswered(planted_keys):
    with LoopbackServer(lambda p, h, b: Reply(body=b"{}", delay=1.0)) as server:
        client = _client(server, timeout=0.2)
        outcome = client.send(client.prepare_grades(SPEC))
    assert outcome.sent and not outcome.answered
    assert "no answer" in outcome.error
    assert len(server.requests) == 1


def test_an_unreachable_server_is_not_sent():
    client = OpenAICompatibleClient(model_id="m", base_url="http://127.0.0.1:9/v1")
    outcome = client.send(client.prepare_grades(SPEC))
    assert not outcome.sent and "not sent" in outcome.error


def test_base_urls_carrying_credentials_are_refused():
    with pytest.raises(ProviderError, match="credentials"):
        client_for(provider="openai_compatible", model_id="m", base_url="https://user:secret@example.com/v1")


def test_the_request_key_ignores_credentials_but_not_content(settings):
    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "key-one-aaaaaaaa", "anthropic": ""}
    one = OpenAICompatibleClient(model_id="m", base_url="http://x.test/v1").prepare_grades(SPEC)
    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "key-two-bbbbbbbb", "anthropic": ""}
    two = OpenAICompatibleClient(model_id="m", base_url="http://x.test/v1").prepare_grades(SPEC)
    other = OpenAICompatibleClient(model_id="m2", base_url="http://x.test/v1").prepare_grades(SPEC)
    assert one.key == two.key != other.key
    assert len(one.key) == 64


def test_a_listed_origin_gets_the_schema_in_llama_cpp_pythons_form_and_others_in_openais(settings):
    from reviewapp.providers.types import StructuredSpec

    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
              "additionalProperties": False}
    spec = StructuredSpec(system="s", user="u", schema_name="answer", schema=schema, max_tokens=50)
    settings.OPENAI_COMPATIBLE_JSON_OBJECT_ORIGINS = ["http://127.0.0.1:8081"]
    with LoopbackServer(port=0) as server:
        listed = OpenAICompatibleClient(model_id="m", base_url="http://127.0.0.1:8081/v1")
        other = OpenAICompatibleClient(model_id="m", base_url=server.url + "/v1")
        assert listed.prepare_structured(spec).body["response_format"] == {"type": "json_object", "schema": schema}
        assert other.prepare_structured(spec).body["response_format"] == {
            "type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": schema}}
        assert listed.prepare_grades(SPEC, method="structured").body["response_format"]["type"] == "json_object"
        # The loopback server answers both forms with the object the schema asks for.
        settings.OPENAI_COMPATIBLE_JSON_OBJECT_ORIGINS = [server.url]
        client = OpenAICompatibleClient(model_id="m", base_url=server.url + "/v1")
        prepared = client.prepare_structured(spec)
        parse = client.validate(prepared, client.send(prepared))
        client.close()
    assert parse.data == {"a": ""}
    listed.close()
    other.close()


def test_a_single_item_is_read_at_its_one_position_even_when_the_model_started_a_sentence():
    # Recorded from SmolLM2-135M on llama.cpp (make model-server): asked for one grade, it sampled "The".
    top = [{"token": "The", "logprob": -0.9}, {"token": "2", "logprob": -1.6}, {"token": "Item", "logprob": -2.0},
           {"token": "0", "logprob": -2.3}, {"token": " 3", "logprob": -3.0}]
    answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "The"},
                           "logprobs": {"content": [{"token": "The", "logprob": -0.9, "top_logprobs": top}]},
                           "finish_reason": "length"}], "usage": {"prompt_tokens": 400}}
    client = _mock_client(lambda request: httpx.Response(200, json=answer))
    one = GradeSpec(system="s", user="u", query="q", items=("a",))
    prepared = client.prepare_grades(one)
    parse = client.validate(prepared, client.send(prepared))
    (grade,) = parse.grades
    weights = [0.0, 0.0, 0.0, 0.0]
    weights[2], weights[0], weights[3] = math.exp(-1.6), math.exp(-2.3), math.exp(-3.0)
    assert grade.captured_mass == pytest.approx(sum(weights))
    assert grade.probs == pytest.approx(tuple(w / sum(weights) for w in weights))
    assert grade.grade == 2
    # With no label among the top tokens there is nothing to read: a named failure, as before.
    bare = {**answer, "choices": [{**answer["choices"][0], "logprobs": {"content": [
        {"token": "The", "logprob": -0.9, "top_logprobs": [{"token": "The", "logprob": -0.9}]}]}}]}
    client = _mock_client(lambda request: httpx.Response(200, json=bare))
    with pytest.raises(ValidationFailed, match="no probability mass on any label"):
        client.validate(prepared, client.send(prepared))
