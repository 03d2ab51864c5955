"""The loopback test and demo server: every job in each provider's shape, the real servers' shapes, the marker.

Clients and server talk real HTTP on 127.0.0.1; the ``provider_loopback`` command runs as a real process
(slow) and prints the free port it took.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from reviewapp.providers.clients.anthropic import AnthropicClient
from reviewapp.providers.clients.base import SIMULATED_HEADER as CLIENT_MARKER
from reviewapp.providers.clients.base import check_base_url, echoable_base_url, url_origin
from reviewapp.providers.clients.openai_compatible import OpenAICompatibleClient, key_may_go_to
from reviewapp.providers.loopback import SIMULATED_HEADER, LoopbackServer
from reviewapp.providers.loopback.answers import extraction_answer, instance_of, verdict_answer
from reviewapp.providers.types import GradeSpec, ProviderError, StructuredSpec, ValidationFailed

ROOT = Path(__file__).resolve().parents[3]
CATEGORIES = ["Governing Law", "Anti-Assignment", "Termination For Convenience", "Insurance"]
EXTRACTION_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["extractions"],
    "properties": {"extractions": {"type": "array", "items": {
        "type": "object", "additionalProperties": False, "required": ["category", "quote"],
        "properties": {"category": {"type": "string", "enum": CATEGORIES}, "quote": {"type": "string"}}}}},
}
VERDICT_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["verdict", "reason"],
                  "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}, "reason": {"type": "string"}}}
CONTRACT = (
    "THIS SUPPLY AGREEMENT is made between Alpha Corp and Beta LLC.\n"
    "1. This Agreement shall be governed by the laws of the State of New York, without regard to conflicts.\n"
    "2. Neither party may assign this Agreement without the prior written consent of the other party.\n"
    "3. Either party may terminate this Agreement for convenience upon thirty days written notice.\n"
    "4. Payment is due within 30 days of invoice."
)


def _extraction_spec(text: str = CONTRACT) -> StructuredSpec:
    user = f"Clause types: ...\n\nContract (T):\n<contract>\n{text}\n</contract>"
    return StructuredSpec(system="Extract.", user=user, schema_name="cuad_extractions", schema=EXTRACTION_SCHEMA)


def _verdict_spec(quote: str) -> StructuredSpec:
    user = ("Clause type: Anti-Assignment\nCUAD's description of it: Is consent or notice required of a party "
            "if the contract is assigned to a third party?\n\nContract excerpt:\n<excerpt>\n...\n</excerpt>\n\n"
            f"Quoted text:\n<quote>\n{quote}\n</quote>\n\nIs it?")
    return StructuredSpec(system="Audit.", user=user, schema_name="cuad_label_verdict", schema=VERDICT_SCHEMA)


def test_extraction_quotes_are_verbatim_sentences_of_the_contract_on_random_texts():
    rng = random.Random(7)
    words = ["party", "shall", "assign", "consent", "governed", "laws", "state", "terminate", "notice",
             "insurance", "policy", "days"]
    for _ in range(50):
        text = ". ".join(" ".join(rng.choice(words) for _ in range(rng.randint(4, 14))) for _ in range(8)) + "."
        answer = extraction_answer(f"<contract>\n{text}\n</contract>", CATEGORIES)
        for item in answer["extractions"]:
            assert item["category"] in CATEGORIES and item["quote"] and item["quote"] in text


def test_each_job_is_answered_in_the_openai_compatible_shape_without_a_key(settings):
    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}
    with LoopbackServer() as server:
        client = OpenAICompatibleClient(model_id="any-local-model", base_url=server.url + "/v1")
        extraction = client.prepare_structured(_extraction_spec())
        outcome = client.send(extraction)
        parse = client.validate(extraction, outcome)
        yes = client.prepare_structured(_verdict_spec(
            "Neither party may assign this Agreement without the prior written consent of the other party."))
        no = client.prepare_structured(_verdict_spec("Payment is due within 30 days of invoice."))
        verdicts = [client.validate(p, client.send(p)).data for p in (yes, no)]
        grades = client.prepare_grades(GradeSpec(system="s", user="u", query="q", items=("a", "b", "c")))
        graded = client.validate(grades, client.send(grades))
        client.close()
        assert all("authorization" not in r["headers"] for r in server.requests)
    assert outcome.simulated and outcome.http_status == 200
    assert CLIENT_MARKER == SIMULATED_HEADER  # the header the server sends is the one the client reads
    quotes = {e["category"]: e["quote"] for e in parse.data["extractions"]}
    assert quotes["Governing Law"].startswith("This Agreement shall be governed by the laws")
    assert quotes["Anti-Assignment"].startswith("Neither party may assign")
    assert "Insurance" not in quotes and all(q in CONTRACT for q in quotes.values())
    assert [v["verdict"] for v in verdicts] == ["yes", "no"]
    assert len(graded.grades) == 3 and graded.method == "logprobs"


def test_each_job_is_answered_in_the_anthropic_shape(settings):
    settings.PROVIDER_KEYS = {**settings.PROVIDER_KEYS, "anthropic": "sk-ant-loopback-test-0000"}
    with LoopbackServer() as server:
        client = AnthropicClient(model_id="claude-any", base_url=server.url)
        extraction = client.prepare_structured(_extraction_spec())
        data = client.validate(extraction, client.send(extraction)).data
        verdict = client.prepare_structured(_verdict_spec("Payment is due within 30 days of invoice."))
        ruled = client.validate(verdict, client.send(verdict)).data
        grades = client.prepare_grades(GradeSpec(system="s", user="u", query="q", items=("a", "b")))
        graded = client.validate(grades, client.send(grades))
        client.close()
    assert {e["category"] for e in data["extractions"]} >= {"Governing Law", "Anti-Assignment"}
    assert ruled["verdict"] == "no" and len(graded.grades) == 2


def test_the_shapes_real_servers_return_are_read_or_refused_clearly(settings):
    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}
    spec = GradeSpec(system="s", user="u", query="q", items=("a", "b"))
    with LoopbackServer(shape="no-logprobs") as server:
        client = OpenAICompatibleClient(model_id="m", base_url=server.url + "/v1")
        by_logprobs = client.prepare_grades(spec, method="logprobs")
        with pytest.raises(ValidationFailed, match="carries no logprobs"):
            client.validate(by_logprobs, client.send(by_logprobs))
        structured = client.prepare_grades(spec, method="structured")
        assert client.validate(structured, client.send(structured)).method == "structured"
        client.close()
    with LoopbackServer(shape="ignore-schema") as server:
        client = OpenAICompatibleClient(model_id="m", base_url=server.url + "/v1")
        for prepared in (client.prepare_grades(spec, method="structured"),
                         client.prepare_structured(_extraction_spec())):
            outcome = client.send(prepared)
            assert outcome.http_status == 200 and outcome.simulated
            with pytest.raises(ValidationFailed, match="not valid JSON"):
                client.validate(prepared, outcome)
        client.close()


def test_a_minimal_instance_answers_any_other_schema():
    schema = {"type": "object", "properties": {"a": {"type": "string", "enum": ["x", "y"]}, "b": {"type": "array"},
                                               "c": {"type": "object", "properties": {"d": {"type": "integer"}}}}}
    assert instance_of(schema) == {"a": "x", "b": [], "c": {"d": 0}}
    assert verdict_answer("no fields at all")["verdict"] == "no"


@pytest.mark.parametrize(("url", "message"), [
    ("", "empty"), ("127.0.0.1:11434/v1", "http:// or https://"), ("http://u:p@h/v1", "credentials"),
    ("http://@h/v1", "credentials"), ("http://h/v1?key=1", "query string"), ("http://h/v1#k", "fragment"),
    ("http://h:0x1/v1", "invalid port"), ("http://h /v1", "whitespace"), ("https:///v1", "no host"),
])
def test_a_bad_base_url_is_refused_by_name(url, message):
    with pytest.raises(ProviderError, match=message):
        check_base_url(url)
    assert echoable_base_url(url) in ("", url) and "p@" not in echoable_base_url(url)


@pytest.mark.parametrize("url", ["http://127.0.0.1:11434/v1", "http://127.0.0.1:8000/v1/", "http://localhost:8080/v1",
                                 "http://127.0.0.1:1234/v1", "https://gateway.firm.example/openai/v1"])
def test_the_base_urls_of_the_usual_servers_are_accepted(url):
    assert check_base_url(url) == url.rstrip("/")


def test_the_key_goes_only_to_its_configured_origins(settings):
    settings.OPENAI_COMPATIBLE_BASE_URL = "https://gateway.firm.example/v1"
    settings.OPENAI_COMPATIBLE_KEY_ORIGINS = ["http://10.0.0.5:8000"]
    assert key_may_go_to("https://gateway.firm.example:443/other/v1")
    assert key_may_go_to("http://10.0.0.5:8000/v1")
    assert not key_may_go_to("http://10.0.0.5:8001/v1") and not key_may_go_to("http://gateway.firm.example/v1")
    assert not key_may_go_to("https://evil.example/v1")
    assert key_may_go_to("http://127.0.0.1:11434/v1") and key_may_go_to("http://localhost:1234/v1")
    assert url_origin("HTTP://Host/v1") == "http://host:80"


def test_the_anthropic_key_never_goes_to_a_base_url_on_another_host(settings):
    from reviewapp.providers.spend.preflight import provider_preflight

    settings.PROVIDER_KEYS = {**settings.PROVIDER_KEYS, "anthropic": "sk-ant-loopback-test-0000"}
    settings.ANTHROPIC_BASE_URL, settings.ANTHROPIC_KEY_ORIGINS = "https://api.anthropic.com", []
    with pytest.raises(ProviderError, match="not where ANTHROPIC_API_KEY may go"):
        provider_preflight(provider="anthropic", model_id="m", base_url="https://collector.example")
    client = AnthropicClient(model_id="m", base_url="https://collector.example")
    prepared = client.prepare_structured(_verdict_spec("q"))
    outcome = client.send(prepared)  # refused before any connection: nothing left this machine
    assert not outcome.sent and "ANTHROPIC_KEY_ORIGINS" in outcome.error
    assert provider_preflight(provider="anthropic", model_id="m", base_url="https://api.anthropic.com/").base_url


@pytest.mark.slow
def test_the_command_takes_a_free_port_prints_it_and_answers_marked_as_simulated(tmp_path):
    env = {**os.environ, "DATA_DIR": os.environ.get("DATA_DIR", "/work/shared/data"), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "manage.py", "provider_loopback", "--port", "0"], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 60
        first = ""
        while time.monotonic() < deadline and not first:
            first = process.stdout.readline().strip()
        match = re.fullmatch(r"port (\d+)", first)
        assert match, (first, process.stderr.read() if process.poll() is not None else "")
        port = int(match.group(1))
        assert 0 < port < 65536
        body = {"model": "m", "messages": [{"role": "user", "content": "Answer with exactly 1 grade"}],
                "logprobs": True, "top_logprobs": 20}
        response = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=body, timeout=10)
        assert response.status_code == 200 and SIMULATED_HEADER in response.headers
        assert json.loads(response.text)["choices"][0]["logprobs"]["content"]
        assert "simulated provider" in process.stdout.readline()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_port_in_use_is_refused_by_name_with_the_way_out():
    import socket

    from django.core.management import CommandError, call_command

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(CommandError, match=rf"--port {port}: cannot listen on 127.0.0.1:{port} .*use --port 0"):
            call_command("provider_loopback", "--port", str(port))
    with pytest.raises(CommandError, match=re.escape("use 0 (a free port) or 1..65535")):
        call_command("provider_loopback", "--port", "70000")
