"""Label-audit judges on a real loopback OpenAI-compatible server with NO key, base URL chosen per judge.

The judge's base URL comes from the audit page (as the commands take it); its answers are simulated, so the
judge is labelled "simulated provider" on the audit page and in its exports, never as an LLM.
"""

from __future__ import annotations

import pytest

from grading.audits.models import Audit, AuditJudge, AuditVerdict
from grading.audits.services import audit_execute
from reviewapp.providers.loopback import LoopbackServer
from reviewapp.providers.models import Receipt
from tests.grading.audit_support import audited_run


@pytest.fixture
def audited(db, tmp_path):
    return audited_run(tmp_path)


def test_keyless_judges_chosen_on_the_page_rule_and_are_labelled_simulated(audited, settings, admin_client_):
    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}
    _, run = audited
    with LoopbackServer(shape="auto") as server:
        response = admin_client_.post("/cuad/audits/", {
            "run": run.pk, "grounding": "0.8",
            "judge_a": "openai_compatible:qwen2.5:7b", "base_url_a": server.url + "/v1",
            "judge_b": "openai_compatible:mistral-nemo", "base_url_b": server.url + "/v1/",
        })
        assert response.status_code == 302, response.content.decode()[-2000:]
        audit = Audit.objects.latest("pk")
        done = audit_execute(audit_id=audit.pk)
        sent = list(server.requests)
    assert done.status == "done", done.error
    assert len(sent) == 2 * audit.n_candidates and max(server.counts.values()) == 1
    assert all("authorization" not in r["headers"] for r in sent)
    judges = {j.slot: j for j in AuditJudge.objects.filter(audit=audit)}
    assert {j.model_id for j in judges.values()} == {"qwen2.5:7b", "mistral-nemo"}
    for judge in judges.values():
        assert judge.provider_setup["base_url"] == server.url + "/v1" and judge.simulated
        assert "simulated provider" in judge.label
        assert Receipt.objects.filter(ledger_id=judge.ledger_id, status="answered", simulated=True).count() == (
            audit.n_candidates)
    reasons = set(AuditVerdict.objects.filter(judge__audit=audit).values_list("reason", flat=True))
    assert reasons and all(r.startswith("simulated verdict") for r in reasons)

    page = admin_client_.get(f"/cuad/audits/{audit.pk}/").content.decode()
    assert page.count('data-testid="simulated"') == 2
    exported = admin_client_.get(f"/cuad/audits/{audit.pk}/audit.json").json()
    assert [j["simulated"] for j in exported["judges"]] == [True, True]
    assert all("simulated provider" in j["label"] for j in exported["judges"])


def test_a_base_url_with_credentials_is_refused_and_never_echoed(audited, admin_client_):
    _, run = audited
    response = admin_client_.post("/cuad/audits/", {
        "run": run.pk, "grounding": "0.8", "judge_a": "openai_compatible:m",
        "base_url_a": "http://user:sk-secret-in-url@127.0.0.1:9/v1", "judge_b": "local-description",
    })
    text = response.content.decode()
    assert response.status_code == 400 and "must not carry credentials" in text
    assert "sk-secret-in-url" not in text and not Audit.objects.exists()


def test_the_api_launches_an_audit_with_a_base_url_per_judge(audited, admin_client_):
    _, run = audited
    response = admin_client_.post("/api/v1/cuad/audits/", {
        "run": run.pk, "judge_a": "openai_compatible:qwen2.5:7b", "base_url_a": "http://127.0.0.1:11434/v1",
        "judge_b": "local-exemplars"}, content_type="application/json")
    assert response.status_code == 202, response.content
    audit = Audit.objects.get(pk=response.json()["id"])
    judge = AuditJudge.objects.get(audit=audit, slot="a")
    assert judge.model_id == "qwen2.5:7b" and judge.provider_setup["base_url"] == "http://127.0.0.1:11434/v1"
    api = admin_client_.get(f"/api/v1/cuad/audits/{audit.pk}/").json()
    assert {j["slot"]: j["base_url"] for j in api["judges"]} == {"a": "http://127.0.0.1:11434/v1", "b": ""}
    assert [j["simulated"] for j in api["judges"]] == [False, False]  # nothing answered yet
    refused = admin_client_.post("/api/v1/cuad/audits/", {
        "run": run.pk, "judge_a": "openai_compatible:m", "base_url_a": "ftp://127.0.0.1/v1",
        "judge_b": "local-exemplars"}, content_type="application/json")
    assert refused.status_code == 400 and "http:// or https://" in refused.json()["errors"][0]
