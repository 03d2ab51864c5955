"""LLM extraction through the shared provider layer (loopback server): one structured request per contract,
receipts, the budget preflight, and resume without re-sending."""

from __future__ import annotations

import json

import pytest

from grading.runs.jobs import JobError, extraction_job_create, job_extract_execute
from grading.runs.models import ConsoleJob
from reviewapp.core.jobs import job_kind_resume
from reviewapp.providers.loopback import LoopbackServer, Reply
from reviewapp.providers.models import Receipt


def _answer_with_quotes(path: str, headers: dict, body_bytes: bytes) -> Reply:
    body = json.loads(body_bytes)
    user = body["messages"][-1]["content"]
    contract = user.split("<contract>\n", 1)[1].split("\n</contract>", 1)[0]
    first_sentence = contract.split(". ")[1] if ". " in contract else contract
    content = json.dumps({"extractions": [{"category": "Governing Law", "quote": first_sentence}]})
    payload = {
        "id": "x", "object": "chat.completion", "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": len(body_bytes) // 4, "completion_tokens": 20, "total_tokens": 0},
    }
    return Reply(body=json.dumps(payload).encode())


def test_an_openai_compatible_run_sends_one_structured_request_per_contract_and_resumes_without_resending(
    loaded, settings
):
    settings.PROVIDER_KEYS = {**settings.PROVIDER_KEYS, "openai_compatible": "sk-test"}
    with LoopbackServer(_answer_with_quotes) as server:
        job = extraction_job_create(
            sample=loaded.sample, provider="openai_compatible", model_id="test/model", base_url=server.url,
            queue=False,
        )
        done = job_extract_execute(job_id=job.pk)
        assert done.status == "done", done.error
        assert len(server.requests) == 4
        sent = json.loads(server.requests[0]["body"])
        schema = sent["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["extractions"]["items"]["required"] == ["category", "quote"]
        assert Receipt.objects.filter(ledger_id=job.ledger_id, status="answered").count() == 4
        assert set(done.run.extractions.values_list("category__name", flat=True)) == {"Governing Law"}
        # a second job execution of the same requests (resume) sends nothing new
        ConsoleJob.objects.filter(pk=job.pk).update(status="failed")
        job.contracts.update(done=False)
        job_kind_resume(done, enqueue=False)
        again = job_extract_execute(job_id=job.pk)
        assert again.status == "done" and len(server.requests) == 4


def test_a_failed_request_is_disclosed_and_never_retried_automatically(loaded, settings):
    settings.PROVIDER_KEYS = {**settings.PROVIDER_KEYS, "openai_compatible": "sk-test"}

    def failing(path, headers, body_bytes):
        return Reply(status=500, body=b'{"error": {"message": "boom"}}')

    with LoopbackServer(failing) as server:
        job = extraction_job_create(
            sample=loaded.sample, provider="openai_compatible", model_id="test/model", base_url=server.url,
            max_requests=8, queue=False,
        )
        failed = job_extract_execute(job_id=job.pk)
        assert failed.status == "failed" and "never re-sent automatically" in failed.error
        assert len(server.requests) == 4 and max(server.counts.values()) == 1
        job_kind_resume(failed, enqueue=False)
        job_extract_execute(job_id=job.pk)
        assert len(server.requests) == 4  # resume without re-attempt sends nothing
        job_kind_resume(ConsoleJob.objects.get(pk=job.pk), reattempt=True, enqueue=False)
        job_extract_execute(job_id=job.pk)
        assert len(server.requests) == 8  # an explicit re-attempt sends each failed request once more


def test_the_budget_preflight_stops_a_run_that_would_exceed_its_requests(loaded, settings):
    settings.PROVIDER_KEYS = {**settings.PROVIDER_KEYS, "openai_compatible": "sk-test"}
    with LoopbackServer(_answer_with_quotes) as server:
        job = extraction_job_create(
            sample=loaded.sample, provider="openai_compatible", model_id="test/model", base_url=server.url,
            max_requests=2, queue=False,
        )
        stopped = job_extract_execute(job_id=job.pk)
        assert stopped.status == "failed" and "stopped" in stopped.error
        assert len(server.requests) == 2


def test_an_llm_provider_needs_a_model_id(loaded):
    with pytest.raises(JobError, match="needs a model id"):
        extraction_job_create(sample=loaded.sample, provider="anthropic", model_id=" ")


def test_a_job_over_chosen_contracts_sends_only_those_and_its_run_declares_them(loaded, settings, admin_client_):
    settings.PROVIDER_KEYS = {**settings.PROVIDER_KEYS, "openai_compatible": ""}
    from grading.dataset.selectors import sample_contract_ids
    from grading.runs.selectors import run_scope_ids

    ids = sample_contract_ids(sample=loaded.sample)
    chosen = [ids[2], ids[0]]  # any order: the job keeps the sample's manifest order
    with LoopbackServer(_answer_with_quotes) as server:
        job = extraction_job_create(sample=loaded.sample, provider="openai_compatible", model_id="small/model",
                                    base_url=server.url, contract_ids=chosen, concurrency=1, queue=False)
        done = job_extract_execute(job_id=job.pk)
        assert len(server.requests) == 2
    assert done.status == "done", done.error
    assert list(job.contracts.order_by("position").values_list("contract_id", flat=True)) == [ids[0], ids[2]]
    assert run_scope_ids(run=done.run) == frozenset(chosen)
    from reviewapp.providers.models import Ledger

    assert Ledger.objects.get(pk=job.ledger_id).concurrency == 1
    # The leaderboard ranks complete runs by default and offers the partial one with a link ranking it beside them.
    page = admin_client_.get(f"/cuad/scorecard/leaderboard/?sample={loaded.sample.pk}").content.decode()
    assert f'data-testid="partial-run-{done.run.pk}"' in page and "2 of 4 contracts" in page
    link = page.split(f'data-testid="partial-run-{done.run.pk}"', 1)[1].split('href="', 1)[1].split('"', 1)[0]
    ranked = admin_client_.get("/cuad/scorecard/leaderboard/" + link.replace("&amp;", "&")).content.decode()
    assert f'data-testid="standing-{done.run.pk}"' in ranked and 'data-testid="leaderboard-notice"' in ranked


def test_chosen_contracts_outside_the_sample_are_refused_by_name(loaded):
    with pytest.raises(JobError, match=r"contract_ids: 1 contract\(s\) are not in sample"):
        extraction_job_create(sample=loaded.sample, provider="openai_compatible", model_id="m",
                              base_url="http://127.0.0.1:9/v1", contract_ids=[10**9], queue=False)
    with pytest.raises(JobError, match="at least one contract"):
        extraction_job_create(sample=loaded.sample, provider="openai_compatible", model_id="m",
                              base_url="http://127.0.0.1:9/v1", contract_ids=[], queue=False)
    assert not ConsoleJob.objects.filter(provider="openai_compatible").exists()
