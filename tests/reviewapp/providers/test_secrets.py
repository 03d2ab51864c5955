"""A planted API key never reaches the database, receipts, the JSONL export, logs or pages."""

from __future__ import annotations

import io
import logging

import pytest
from django.core.management import call_command

from reviewapp.providers import selectors, services
from reviewapp.providers.clients import client_for_ledger
from reviewapp.providers.loopback import LoopbackServer, Reply, default_responder
from reviewapp.providers.types import GradeSpec


def _echoing_responder(path, headers, body):
    """A hostile server that echoes the credentials it received into an error body."""
    if b"echo" in body:
        return Reply(status=401, body=("bad key " + headers.get("authorization", "") +
                                       headers.get("x-api-key", "")).encode())
    return default_responder(path, headers, body)


@pytest.mark.django_db
def test_a_planted_key_appears_nowhere(planted_keys, admin_client_, caplog, settings):
    caplog.set_level(logging.DEBUG)
    ledgers = []
    with LoopbackServer(_echoing_responder) as server:
        settings.OPENAI_COMPATIBLE_KEY_ORIGINS = [server.url]  # the key goes to its configured origins only
        for provider, base in (("openai_compatible", server.url + "/v1"), ("anthropic", server.url)):
            ledger = services.ledger_create(purpose="secret test", provider=provider, model_id="m", base_url=base,
                                            max_requests=10, max_input_tokens=100_000)
            client = client_for_ledger(ledger)
            specs = [GradeSpec(system="s", user="u", query="q", items=("a", "b")),
                     GradeSpec(system="s", user="echo", query="q", items=("a",))]
            report = services.ledger_execute(ledger=ledger, client=client,
                                             requests=[client.prepare_grades(s) for s in specs])
            assert [r.status for r in report.results] == ["answered", "failed"]
            ledgers.append(ledger)
        # the keys really were sent
        assert any(planted_keys["openai_compatible"] in r["headers"].get("authorization", "") for r in server.requests)
        assert any(planted_keys["anthropic"] == r["headers"].get("x-api-key") for r in server.requests)

    dump = io.StringIO()
    call_command("dumpdata", "providers", stdout=dump)
    exports = "".join("".join(selectors.receipts_jsonl(ledger=ledger)) for ledger in ledgers)
    pages = ""
    for ledger in ledgers:
        for url in (f"/providers/ledgers/{ledger.pk}/receipts.jsonl", f"/api/v1/providers/ledgers/{ledger.pk}/",
                    "/admin/providers/receipt/", f"/admin/providers/ledger/{ledger.pk}/change/"):
            response = admin_client_.get(url)
            assert response.status_code == 200, url
            pages += b"".join(response.streaming_content).decode() if response.streaming else response.content.decode()
        receipt = ledger.receipts.get(seq=2)
        pages += admin_client_.get(f"/admin/providers/receipt/{receipt.pk}/change/").content.decode()
    logs = caplog.text
    assert "[redacted]" in exports  # the echoed key was caught and redacted
    for key in planted_keys.values():
        for where, text in (("database dump", dump.getvalue()), ("JSONL export", exports), ("logs", logs),
                            ("pages", pages)):
            assert key not in text, f"planted key found in {where}"
            assert key[8:40] not in text, f"part of a planted key found in {where}"


@pytest.mark.django_db
def test_reviewers_cannot_read_receipts(reviewer_client, planted_keys):
    ledger = services.ledger_create(purpose="t", provider="local", model_id="all-MiniLM-L6-v2-onnx-int8",
                                    max_requests=1, max_input_tokens=10)
    assert reviewer_client.get(f"/providers/ledgers/{ledger.pk}/receipts.jsonl").status_code == 403
    assert reviewer_client.get(f"/api/v1/providers/ledgers/{ledger.pk}/").status_code == 403
