"""Rerank runs: plan, providers end to end, batching failures, budget, claims, pages and command."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankGrade, RerankRun
from benchmarks.retrieval.models import RetrievalCandidate
from benchmarks.suites.models import QueryKind
from reviewapp.core.jobs import job_kind_resume
from reviewapp.providers.loopback import LoopbackServer, Reply, default_responder, grades_for
from reviewapp.providers.models import Receipt
from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run
from tests.helpers import wait_until
from tests.reviewapp.providers.conftest import PLANTED

LOCAL_MODEL = "all-MiniLM-L6-v2-onnx-int8"


@pytest.fixture
def keys(settings):
    settings.PROVIDER_KEYS = dict(PLANTED)


@pytest.fixture
def retrieval(db):
    return synthetic_retrieval_run()


def _reranked_candidates(retrieval_run) -> list[int]:
    return list(
        RetrievalCandidate.objects.filter(result__run=retrieval_run,
                                          result__query__kind__in=[QueryKind.RANKING, QueryKind.OUTSIDE_CORPUS])
        .order_by("result__query__position", "rank").values_list("id", flat=True)
    )


def test_the_plan_covers_exactly_the_candidates_of_ranking_queries_and_outside_controls(retrieval):
    plan = rerank.rerank_plan(retrieval_run=retrieval, question_version="statute-relevance-v1",
                              candidates_per_request=4)
    assert [c for p in plan for c in p.candidate_ids] == _reranked_candidates(retrieval)
    assert len(_reranked_candidates(retrieval)) == 4 * 30
    assert len(plan) == 4 * 8  # 30 candidates at 4 per request: 7 full requests and one of 2
    assert {p.qid for p in plan} == {"q0", "q1", "q2", "oc1"}  # no exact-citation control
    assert [len(p.candidate_ids) for p in plan[:8]] == [4] * 7 + [2]
    again = rerank.rerank_plan(retrieval_run=retrieval, question_version="statute-relevance-v1",
                               candidates_per_request=4)
    assert [p.spec for p in again] == [p.spec for p in plan]


def test_the_example_nrs_suite_plans_272_requests_the_default_budget(example_suite):
    from benchmarks.retrieval.services import retrieval_run_create

    retrieval_run = retrieval_run_create(suite=example_suite, k=30)
    run = rerank.rerank_run_create(retrieval_run=retrieval_run, provider="local", enqueue=False)
    per_query = [len(_reranked_candidates_of(retrieval_run, r.query_id)) for r in
                 retrieval_run.results.exclude(query__kind="exact_citation")]
    assert len(per_query) == 34 and all(n <= 30 for n in per_query)
    assert run.requests_planned == sum(-(-n // 4) for n in per_query) <= 272  # 8 per query when all 30 are there
    assert run.candidates_planned == sum(per_query)
    assert run.ledger.max_requests == 272 and run.ledger.max_input_tokens == 2_000_000


def _reranked_candidates_of(retrieval_run, query_id) -> list[int]:
    return list(RetrievalCandidate.objects.filter(result__run=retrieval_run, result__query_id=query_id)
                .values_list("id", flat=True))


def _grades(run) -> list[RerankGrade]:
    return rerank.rerank_run_grades(run=run)


def test_a_local_run_grades_every_candidate_as_a_local_heuristic(retrieval):
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    assert rerank.rerank_run_execute(run_id=run.pk) == "done"
    assert run.ledger.max_requests == 272 and run.requests_planned == 32
    grades = _grades(run)
    assert [g.candidate_id for g in grades] == _reranked_candidates(retrieval)
    for g in grades:
        assert g.status == "graded" and g.method == "local heuristic"
        assert sum(g.probs) == pytest.approx(1.0)
        assert g.p_useful == pytest.approx(g.p2 + g.p3)
        assert 0 <= g.confidence <= 1
    assert Receipt.objects.filter(ledger=run.ledger, status="answered").count() == run.requests_planned
    run.refresh_from_db()
    assert run.method_label.startswith("local heuristic")


def test_an_openai_compatible_run_reads_each_candidates_grade_token(retrieval, keys):
    with LoopbackServer() as server:
        run = rerank.rerank_run_create(retrieval_run=retrieval, provider="openai_compatible", model_id="loop/m",
                                       base_url=server.url + "/v1", enqueue=False)
        assert rerank.rerank_run_execute(run_id=run.pk) == "done"
        bodies = [r["body"] for r in server.requests]
    assert len(bodies) == run.requests_planned and server.max_count_per_body == 1
    receipts = {r.request_key: r for r in Receipt.objects.filter(ledger=run.ledger)}
    for g in _grades(run):
        receipt = receipts[g.request_key]
        body = json.dumps(receipt.request_body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        n = len(json.loads(receipt.response_body)["choices"][0]["message"]["content"].split(","))
        assert g.grade == grades_for(body, n)[g.position_in_request - 1]  # the loopback's own answer
        assert g.method == "logprobs" and g.captured_mass < 1.0


def test_an_anthropic_run_uses_stated_distributions(retrieval, keys):
    with LoopbackServer() as server:
        run = rerank.rerank_run_create(retrieval_run=retrieval, provider="anthropic", model_id="claude-test",
                                       base_url=server.url, enqueue=False)
        assert rerank.rerank_run_execute(run_id=run.pk) == "done"
    grades = _grades(run)
    assert len(grades) == 120 and {g.method for g in grades} == {"structured"}
    assert {r["headers"]["anthropic-version"] for r in server.requests} == {"2023-06-01"}


def test_an_unalignable_batch_is_a_recorded_failure_for_exactly_its_candidates(retrieval, keys, admin_client_):
    def responder(path, headers, body):
        reply = default_responder(path, headers, body)
        payload = json.loads(reply.body)
        if server.requests and len(server.requests) == 3:  # the third request answers one grade short
            payload["choices"][0]["logprobs"]["content"] = payload["choices"][0]["logprobs"]["content"][:-2]
        return Reply(body=json.dumps(payload).encode())

    with LoopbackServer(responder) as server:
        run = rerank.rerank_run_create(retrieval_run=retrieval, provider="openai_compatible", model_id="m",
                                       base_url=server.url + "/v1", concurrency=1, enqueue=False)
        assert rerank.rerank_run_execute(run_id=run.pk) == "failed"  # incomplete: 4 candidates have no grade
    failed = [g for g in _grades(run) if g.status != "graded"]
    assert [g.request_index for g in failed] == [2, 2, 2, 2]
    assert all("cannot align" in g.error for g in failed)
    progress = rerank.rerank_run_progress(run=run)
    assert progress.failed == 4 and progress.graded == 116
    html = admin_client_.get(f"/benchmarks/rerank/{run.pk}/").content.decode()
    assert "Failures disclosed (4 candidates)" in html and "re-attempt failed and unknown requests" in html
    assert 'data-testid="resume-form"' in html and 'name="reattempt"' in html


def test_the_budget_stops_a_run_cleanly_and_resuming_sends_nothing_more(retrieval):
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", max_requests=5, enqueue=False)
    assert rerank.rerank_run_execute(run_id=run.pk) == "stopped"
    run.refresh_from_db()
    assert "5 of 5 attempted requests" in run.stop_reason
    assert Receipt.objects.filter(ledger=run.ledger).count() == 5
    assert len(_grades(run)) == 20
    job_kind_resume(run, take_over=True)
    assert rerank.rerank_run_execute(run_id=run.pk) == "stopped"
    assert Receipt.objects.filter(ledger=run.ledger).count() == 5


def test_a_second_delivery_finds_nothing_to_claim(retrieval):
    from django.utils import timezone

    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    # Running elsewhere, and beating: a second delivery leaves it alone.
    RerankRun.objects.filter(pk=run.pk).update(status="running", claim_token="someone-else",
                                               heartbeat_at=timezone.now(), started_at=timezone.now())
    assert rerank.rerank_run_execute(run_id=run.pk) == ""
    assert not Receipt.objects.filter(ledger=run.ledger).exists()
    RerankRun.objects.filter(pk=run.pk).update(status="queued", claim_token="")
    assert rerank.rerank_run_execute(run_id=run.pk) == "done"
    assert rerank.rerank_run_execute(run_id=run.pk) == ""
    assert Receipt.objects.filter(ledger=run.ledger).count() == run.requests_planned


def test_a_second_delivery_of_a_run_whose_worker_went_silent_takes_it_over(retrieval):
    from datetime import timedelta

    from django.utils import timezone

    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    silent = timezone.now() - timedelta(seconds=31)  # the local model's stale timeout is 30 s
    RerankRun.objects.filter(pk=run.pk).update(status="running", claim_token="dead-worker", worker="h:1",
                                               heartbeat_at=silent, started_at=silent, executions=1)
    assert rerank.rerank_run_execute(run_id=run.pk) == "done"
    run.refresh_from_db()
    assert run.executions == 2 and run.claim_token != "dead-worker"
    assert Receipt.objects.filter(ledger=run.ledger).count() == run.requests_planned


def test_a_live_run_cannot_be_resumed_but_a_stale_one_can(retrieval, settings):
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    RerankRun.objects.filter(pk=run.pk).update(status="running", claim_token="x",
                                               heartbeat_at=__import__("django.utils.timezone").utils.timezone.now())
    with pytest.raises(rerank.RerankError, match="alive"):
        job_kind_resume(run, take_over=True)
    settings.JOB_STALE_SECONDS = 0
    assert job_kind_resume(run, take_over=True).status == "queued"


def test_cancel_stops_a_running_run_after_the_requests_in_flight(retrieval):
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    calls = []

    def before_send():
        calls.append(1)
        if len(calls) == 4:
            rerank.rerank_run_cancel(run=run)

    assert rerank.rerank_run_execute(run_id=run.pk, before_send=before_send) == "cancelled"
    assert Receipt.objects.filter(ledger=run.ledger).count() == 3


def test_cancelling_a_queued_run_ends_it_at_once(retrieval):
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    assert rerank.rerank_run_cancel(run=run).status == "cancelled"
    assert rerank.rerank_run_execute(run_id=run.pk) == ""


def test_bad_launch_settings_are_refused_with_the_reason(retrieval):
    with pytest.raises(rerank.RerankError, match="logprobs"):
        rerank.rerank_run_create(retrieval_run=retrieval, provider="anthropic", model_id="c", method="logprobs")
    with pytest.raises(rerank.RerankError, match="model id"):
        rerank.rerank_run_create(retrieval_run=retrieval, provider="openai_compatible")
    assert not RerankRun.objects.exists()


def test_an_admin_launches_from_the_form_and_watches_it_finish(admin_client_, celery_worker):
    retrieval_run = synthetic_retrieval_run(seed=11)
    response = admin_client_.post("/benchmarks/rerank/new/", {
        "retrieval_run": retrieval_run.pk, "provider": "local", "model_id": "", "method": "",
        "question_version": "statute-relevance-v1", "candidates_per_request": 4, "max_requests": 272,
        "max_input_tokens": 2_000_000,
    })
    run = RerankRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/benchmarks/rerank/{run.pk}/"
    wait_until(lambda: RerankRun.objects.get(pk=run.pk).is_finished, timeout=120)
    page = admin_client_.get(f"/benchmarks/rerank/{run.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "local heuristic" in html and "not the probability that the grade is correct" in html
    poll = admin_client_.get(f"/jobs/rerank/{run.pk}/progress/", HTTP_HX_REQUEST="true")
    assert poll.status_code == 286  # htmx stops polling
    receipts = admin_client_.get(f"/benchmarks/rerank/{run.pk}/receipts.jsonl")
    lines = b"".join(receipts.streaming_content).decode().splitlines()
    assert len(lines) == 1 + run.requests_planned
    api = admin_client_.get(f"/api/v1/benchmarks/rerank-runs/{run.pk}/").json()
    assert api["run"]["status"] == "done" and len(api["grades"]) == 120


def test_a_running_run_keeps_polling(admin_client_, retrieval):
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    response = admin_client_.get(f"/jobs/rerank/{run.pk}/progress/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and 'hx-trigger="every 2s"' in response.content.decode()


def test_reviewers_get_403_everywhere(reviewer_client, retrieval):
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    for method, url in [("get", "/benchmarks/rerank/"), ("get", "/benchmarks/rerank/new/"),
                        ("post", "/benchmarks/rerank/new/"), ("get", f"/benchmarks/rerank/{run.pk}/"),
                        ("post", f"/benchmarks/rerank/{run.pk}/cancel/"),
                        ("post", f"/jobs/rerank/{run.pk}/resume/"),
                        ("get", f"/benchmarks/rerank/{run.pk}/receipts.jsonl"),
                        ("get", f"/api/v1/benchmarks/rerank-runs/{run.pk}/")]:
        assert getattr(reviewer_client, method)(url).status_code == 403, url


def test_stakeholders_watch_but_cannot_launch_or_cancel(stakeholder_client, retrieval):
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    assert stakeholder_client.get(f"/benchmarks/rerank/{run.pk}/").status_code == 200
    assert stakeholder_client.get("/benchmarks/rerank/new/").status_code == 403
    assert stakeholder_client.post(f"/benchmarks/rerank/{run.pk}/cancel/").status_code == 403


def test_the_command_runs_a_local_rerank(retrieval, capsys):
    call_command("rerank", "--retrieval-run", str(retrieval.pk), "--provider", "local", "--sync")
    out = capsys.readouterr().out
    assert "32 requests planned" in out and "done; graded 120, failed 0, unknown 0" in out


def test_a_planted_key_never_reaches_the_run_page_receipts_or_api(retrieval, keys, admin_client_, settings):
    with LoopbackServer() as server:
        settings.OPENAI_COMPATIBLE_KEY_ORIGINS = [server.url]  # the key goes to its configured origins only
        run = rerank.rerank_run_create(retrieval_run=retrieval, provider="openai_compatible", model_id="m",
                                       base_url=server.url + "/v1", enqueue=False)
        rerank.rerank_run_execute(run_id=run.pk)
        assert server.requests[0]["headers"]["authorization"] == "Bearer " + PLANTED["openai_compatible"]
    texts = [admin_client_.get(f"/benchmarks/rerank/{run.pk}/").content.decode(),
             admin_client_.get(f"/api/v1/benchmarks/rerank-runs/{run.pk}/").content.decode(),
             b"".join(admin_client_.get(f"/benchmarks/rerank/{run.pk}/receipts.jsonl").streaming_content).decode()]
    for key in PLANTED.values():
        assert not any(key in text for text in texts)


def test_the_takeover_form_of_a_running_run_posts_what_every_kind_posts(admin_client_, retrieval):
    import re

    from django.utils import timezone

    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    RerankRun.objects.filter(pk=run.pk).update(status="running", claim_token="t", worker="celery@box:1",
                                               heartbeat_at=timezone.now(), started_at=timezone.now())
    html = admin_client_.get(f"/benchmarks/rerank/{run.pk}/").content.decode()
    (form,) = re.findall(r'<form[^>]*data-testid="takeover-form".*?</form>', html, flags=re.S)
    assert '<input type="hidden" name="worker_lost" value="1">' in form  # as templates/_job_lifecycle.html#forms
