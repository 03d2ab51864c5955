"""The recorded Anthropic Messages response (one forced tool call, usage with cache tokens), served by the
loopback server as an extraction model or as an audit judge, and the checks of what was sent."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from reviewapp.providers.loopback import LoopbackServer, Reply
from reviewapp.providers.models import Receipt

FIXTURE = json.loads((Path(__file__).parents[1] / "reviewapp/providers/fixtures/anthropic_message_tool_use.json")
                     .read_text())
USAGE = FIXTURE["usage"]
# What the provider layer must report as input: plain input plus both kinds of cache tokens.
REPORTED = USAGE["input_tokens"] + USAGE["cache_creation_input_tokens"] + USAGE["cache_read_input_tokens"]
KEY = "sk-ant-" + "loopback-test-key"


def recorded_message(body: dict, answer: dict) -> bytes:
    """The recorded Messages response, its one tool_use block answering the forced tool with ``answer``."""
    message = copy.deepcopy(FIXTURE)
    message["model"] = body["model"]
    message["content"][0]["name"] = body["tool_choice"]["name"]
    message["content"][0]["input"] = answer
    return json.dumps(message).encode()


def assert_anthropic_requests(server: LoopbackServer) -> None:
    for request in server.requests:
        assert request["path"] == "/v1/messages"
        assert request["headers"]["x-api-key"] == KEY
        assert request["headers"]["anthropic-version"] == "2023-06-01"
        assert "authorization" not in request["headers"]
        body = json.loads(request["body"])
        assert body["tool_choice"] == {"type": "tool", "name": body["tools"][0]["name"]}
    assert server.max_count_per_body == 1


def assert_one_receipt_per_request(server: LoopbackServer, ledger_ids) -> None:
    receipts = Receipt.objects.filter(ledger_id__in=list(ledger_ids))
    assert receipts.count() == len(server.requests)
    assert sorted(r.request_body["model"] for r in receipts) == sorted(
        json.loads(r["body"])["model"] for r in server.requests
    )
    for receipt in receipts:
        assert receipt.status == "answered", receipt.error
        assert receipt.reported_input_tokens == REPORTED
        assert receipt.usage["cache_read_input_tokens"] == USAGE["cache_read_input_tokens"]
        assert KEY not in json.dumps(receipt.request_body) and KEY not in receipt.response_body


def second_sentence(body: dict) -> str:
    """The loopback model's quote: the second sentence of the contract it was sent."""
    user = body["messages"][-1]["content"]
    contract = user.split("<contract>\n", 1)[1].split("\n</contract>", 1)[0]
    return contract.split(". ")[1] if ". " in contract else contract


def quotes_reply(path: str, headers: dict, body_bytes: bytes) -> Reply:
    """An extraction model: the contract's second sentence, as Governing Law."""
    body = json.loads(body_bytes)
    answer = {"extractions": [{"category": "Governing Law", "quote": second_sentence(body)}]}
    return Reply(body=recorded_message(body, answer))


def verdicts_reply(path: str, headers: dict, body_bytes: bytes) -> Reply:
    """A judge: yes when the quote has an odd length, no otherwise."""
    body = json.loads(body_bytes)
    quote = body["messages"][-1]["content"].split("<quote>\n", 1)[1].split("\n</quote>", 1)[0]
    verdict = "yes" if len(quote) % 2 else "no"
    return Reply(body=recorded_message(body, {"verdict": verdict, "reason": f"anthropic says {verdict}"}))
