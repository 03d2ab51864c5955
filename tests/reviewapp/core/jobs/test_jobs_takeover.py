"""Who holds a tracked job, when it may be taken over, and what a second delivery does.

A rerank run stands in for every tracked job (the lifecycle is the same code for extraction jobs and audits).
``celery inspect`` replies are given as data: what a node answers when it runs the job, when it answered
without it (its executing process died), and when it did not answer (dead or paused).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankRun
from reviewapp.core import jobs
from reviewapp.core.jobs import job_kind_resume
from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run

NODE = "celery@box-1"


@pytest.fixture
def run(db):
    return rerank.rerank_run_create(retrieval_run=synthetic_retrieval_run(), provider="local", enqueue=False)


def _running(run, *, worker: str = f"{NODE}:4242", age: float = 1.0, token: str = "old") -> RerankRun:  # noqa: S107 - a claim token, not a secret
    moment = timezone.now() - timedelta(seconds=age)
    RerankRun.objects.filter(pk=run.pk).update(status="running", claim_token=token, worker=worker,
                                               heartbeat_at=moment, started_at=moment, executions=1)
    run.refresh_from_db()
    return run


def test_the_stale_timeout_is_short_for_the_local_model_and_follows_the_provider_timeout_otherwise(run, settings):
    settings.JOB_STALE_SECONDS_LOCAL = 30
    settings.JOB_STALE_SECONDS_REMOTE = 2 * 45
    assert jobs.stale_after(run) == timedelta(seconds=30)
    run.provider = "anthropic"
    assert jobs.stale_after(run) == timedelta(seconds=90)
    settings.JOB_STALE_SECONDS = 7
    assert jobs.stale_after(run) == timedelta(seconds=7)


def test_the_default_remote_timeout_is_twice_the_provider_timeout_and_at_least_30_seconds():
    from django.conf import settings

    assert settings.JOB_STALE_SECONDS_LOCAL == 30
    assert max(30, 2 * settings.PROVIDER_TIMEOUT_SECONDS) == settings.JOB_STALE_SECONDS_REMOTE


def test_liveness_reads_celery_inspect_only_from_the_node_that_runs_the_job(run):
    run = _running(run)
    held = jobs.job_liveness(run, active={NODE: [{"id": "t", "worker_pid": 4242}], "celery@box-2": []})
    gone = jobs.job_liveness(run, active={NODE: [{"id": "t", "worker_pid": 999}]})
    silent = jobs.job_liveness(run, active={"celery@box-2": [{"id": "t", "worker_pid": 4242}]})
    assert (held.inspect, gone.inspect, silent.inspect) == ("held", "gone", "silent")
    assert gone.takeover_allowed and not held.takeover_allowed and not silent.takeover_allowed
    assert "no longer runs it" in gone.describe() and f"{NODE}:4242" in gone.describe()


def test_a_process_that_now_runs_another_task_no_longer_holds_the_job(run):
    """An outage interrupts the job and frees its prefork child, which then takes the next task: often the sweep
    itself. Only the job's own task in that process holds it."""
    run = _running(run)
    own = {"id": "t", "worker_pid": 4242, "name": "benchmarks.rerank_run_execute", "args": [run.pk]}
    sweep = {"id": "s", "worker_pid": 4242, "name": "reviewapp.jobs_sweep", "args": []}
    other_job = {**own, "id": "o", "args": [run.pk + 1]}
    assert jobs.job_liveness(run, active={NODE: [own]}).inspect == "held"
    assert jobs.job_liveness(run, active={NODE: [sweep]}).inspect == "gone"
    assert jobs.job_liveness(run, active={NODE: [other_job]}).inspect == "gone"
    assert jobs.job_liveness(run, active={NODE: [sweep, own]}).inspect == "held"


def test_an_in_process_execution_is_judged_by_its_heartbeat_alone(run):
    run = _running(run, worker="box-1:4242 (in-process)")
    assert jobs.job_liveness(run, active={NODE: []}).inspect == "not asked"


def test_a_live_job_is_not_taken_over_and_the_message_names_worker_since_heartbeat_and_timeout(run, monkeypatch):
    run = _running(run)
    monkeypatch.setattr(jobs, "celery_active", lambda timeout=None: {NODE: [{"worker_pid": 4242}]})
    with pytest.raises(rerank.RerankError) as refused:
        job_kind_resume(run, take_over=True, enqueue=False)
    message = str(refused.value)
    assert f"{NODE}:4242" in message and "since" in message and "last heartbeat" in message
    assert "stale after 30 s" in message and "its worker is running it" in message
    assert RerankRun.objects.get(pk=run.pk).claim_token == "old"


def test_inspect_showing_no_worker_holding_the_job_allows_an_immediate_takeover(run, monkeypatch):
    run = _running(run)
    monkeypatch.setattr(jobs, "celery_active", lambda timeout=None: {NODE: [{"worker_pid": 1}]})
    resumed = job_kind_resume(run, take_over=True, enqueue=False)
    assert resumed.status == "queued" and resumed.claim_token == "" and resumed.worker == ""


def test_no_reply_from_any_worker_falls_back_to_the_heartbeat_age(run, monkeypatch):
    monkeypatch.setattr(jobs, "celery_active", lambda timeout=None: None)
    run = _running(run, age=5)
    with pytest.raises(rerank.RerankError, match="did not answer"):
        job_kind_resume(run, take_over=True, enqueue=False)
    run = _running(run, age=31)
    assert job_kind_resume(run, take_over=True, enqueue=False).status == "queued"


def test_a_takeover_leaves_alone_a_job_claimed_again_meanwhile(run):
    judged = _running(run, age=60, token="dead")
    RerankRun.objects.filter(pk=run.pk).update(claim_token="fresh-execution")
    taken, _ = jobs.job_takeover(RerankRun, job=judged, from_statuses=["running"], ask_workers=False)
    assert not taken
    assert RerankRun.objects.get(pk=run.pk).claim_token == "fresh-execution"


def test_an_execution_that_lost_its_claim_writes_nothing_more(run):
    token = jobs.job_claim(RerankRun, pk=run.pk)
    assert token and jobs.job_beat(RerankRun, pk=run.pk, token=token)
    taken, _ = jobs.job_takeover(RerankRun, job=RerankRun.objects.get(pk=run.pk), from_statuses=["running"],
                                 force=True)
    assert taken
    assert not jobs.job_beat(RerankRun, pk=run.pk, token=token)
    assert not jobs.job_finish(RerankRun, pk=run.pk, token=token, status="done")
    assert RerankRun.objects.get(pk=run.pk).status == "queued"


def test_a_second_delivery_of_a_finished_job_does_nothing(run):
    assert rerank.rerank_run_execute(run_id=run.pk) == "done"
    finished = RerankRun.objects.get(pk=run.pk)
    RerankRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert jobs.job_claim(RerankRun, pk=run.pk) == ""
    again = RerankRun.objects.get(pk=run.pk)
    assert (again.status, again.finished_at, again.executions) == ("done", finished.finished_at, 1)


def test_an_execution_outside_celery_is_named_in_process():
    assert jobs.worker_name().endswith("(in-process)")
