"""A CUAD extraction job or audit launched with a provider this server cannot use is refused before anything is
created: the message names the missing environment variable, nothing is queued, no ledger exists, and the
commands exit non-zero. Same preflight as the rerank runs (reviewapp/providers/spend/preflight.py)."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from grading.audits.models import Audit
from grading.runs.models import ConsoleJob
from reviewapp.providers.models import Ledger, Receipt
from tests.grading.console_support import load

OPENROUTER = "https://openrouter.ai/api/v1"


@pytest.fixture
def keyless(settings):
    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}
    settings.OPENAI_COMPATIBLE_BASE_URL = OPENROUTER
    settings.ANTHROPIC_BASE_URL = "https://api.anthropic.com"


@pytest.fixture
def loaded(db, tmp_path):
    return load(tmp_path)


def _nothing_created(ledgers_before: int) -> None:
    assert not ConsoleJob.objects.filter(kind="extract").exists()
    assert not Audit.objects.exists()
    assert Ledger.objects.count() == ledgers_before
    assert not Receipt.objects.exists()


def test_a_keyless_extraction_launch_from_the_page_names_the_variable_and_creates_nothing(
        loaded, keyless, admin_client_):
    response = admin_client_.post("/cuad/runs/launch/", {"provider": "openai_compatible",
                                                         "model_id": "openai/gpt-4o-mini", "limit": "2"})
    assert response.status_code == 400
    assert "OPENROUTER_API_KEY is not set" in response.content.decode()
    _nothing_created(0)


def test_a_keyless_anthropic_extraction_from_the_api_names_its_variable(loaded, keyless, admin_client_):
    response = admin_client_.post("/api/v1/cuad/jobs/", {"provider": "anthropic", "model_id": "claude-x"},
                                  content_type="application/json")
    assert response.status_code == 400
    assert "ANTHROPIC_API_KEY is not set" in response.content.decode()
    _nothing_created(0)


def test_a_keyless_extraction_from_the_command_exits_non_zero(loaded, keyless):
    with pytest.raises(CommandError, match="OPENROUTER_API_KEY is not set"):
        call_command("extract_cuad", "--provider", "openai_compatible", "--model", "openai/gpt-4o-mini", "--inline")
    _nothing_created(0)


def test_a_malformed_base_url_is_refused_naming_the_field(loaded, keyless):
    with pytest.raises(CommandError, match="base URL"):
        call_command("extract_cuad", "--provider", "openai_compatible", "--model", "m",
                     "--base-url", "ftp://user:pw@example.org", "--inline")
    _nothing_created(0)


def test_the_local_extractor_needs_no_key(loaded, keyless):
    from grading.runs.jobs import extraction_job_create

    job = extraction_job_create(sample=loaded.sample, provider="local", limit=1, queue=False)
    assert job.status == "queued" and job.ledger_id is None


def test_a_keyless_audit_judge_from_the_page_names_the_variable_and_creates_nothing(
        loaded, keyless, admin_client_):
    ledgers = Ledger.objects.count()
    response = admin_client_.post("/cuad/audits/", {"run": loaded.noisy.pk, "judge_a": "local-description",
                                                    "judge_b": "anthropic:claude-judge"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "judge B" in page and "ANTHROPIC_API_KEY is not set" in page
    _nothing_created(ledgers)


def test_a_keyless_audit_from_the_command_exits_non_zero(loaded, keyless):
    ledgers = Ledger.objects.count()
    with pytest.raises(CommandError, match="judge A: OPENROUTER_API_KEY is not set"):
        call_command("audit_cuad", "--run", str(loaded.noisy.pk), "--judge-a", "openai_compatible:some/model",
                     "--inline")
    _nothing_created(ledgers)
