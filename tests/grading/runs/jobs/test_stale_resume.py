"""A console job or audit left "running" by a dead worker: the admin-only "worker seems to have stopped" action
resumes it only once its heartbeat is stale, and the resumed run sends no request twice."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
from django.utils import timezone

from grading.audits.judging.judges import parse_choice
from grading.audits.models import Audit
from grading.audits.services import audit_create, audit_execute
from grading.runs.jobs import extraction_job_create, job_extract_execute
from grading.runs.models import ConsoleJob
from reviewapp.core.jobs import is_stale, stale_after
from reviewapp.providers.loopback import LoopbackServer
from reviewapp.providers.models import Ledger, Receipt
from tests.grading.anthropic_support import quotes_reply, verdicts_reply
from tests.grading.audit_support import audited_run
from tests.grading.console_support import load

STALE_TEXT = "The worker seems to have stopped"


class WorkerKilled(BaseException):
    """Not an Exception: like a killed process, the executor gets no chance to record a failure."""


def die_on_beat(monkeypatch, module: str, n: int) -> None:
    """The executor of ``module`` dies at its n-th heartbeat (before its n-th request), leaving the row 'running'."""
    original = importlib.import_module(module).job_beat
    calls = {"n": 0}

    def beat(model, **kwargs):
        if set(kwargs) == {"pk", "token"}:  # the beat before a request (progress beats carry a stage)
            calls["n"] += 1
            if calls["n"] == n:
                raise WorkerKilled
        return original(model, **kwargs)

    monkeypatch.setattr(f"{module}.job_beat", beat)


def backdate(model, pk: int) -> None:
    old = timezone.now() - stale_after() - timedelta(seconds=5)
    model.objects.filter(pk=pk).update(heartbeat_at=old, started_at=old)


def test_a_stale_running_job_resumes_from_its_page_and_sends_no_request_twice(
    db, tmp_path, monkeypatch, anthropic_key, admin_client_
):
    loaded = load(tmp_path)
    with LoopbackServer(quotes_reply) as server:
        job = extraction_job_create(
            sample=loaded.sample, provider="anthropic", model_id="claude-test", base_url=server.url, queue=False
        )
        Ledger.objects.filter(pk=job.ledger_id).update(concurrency=1)  # one at a time: the death lands between
        with monkeypatch.context() as m:
            die_on_beat(m, "grading.runs.jobs", 3)
            with pytest.raises(WorkerKilled):
                job_extract_execute(job_id=job.pk)
        job.refresh_from_db()
        assert job.status == "running" and job.done == 2 and len(server.requests) == 2

        # fresh heartbeat: no action offered, and a POST is refused with a message
        page = admin_client_.get(f"/cuad/runs/jobs/{job.pk}/").content.decode()
        assert STALE_TEXT not in page
        response = admin_client_.post(f"/jobs/extraction/{job.pk}/resume/", {"worker_lost": "1"}, follow=True)
        assert "is still running and made progress" in response.content.decode()
        assert ConsoleJob.objects.get(pk=job.pk).status == "running"
        # the ordinary resume (without worker_lost) still refuses a running job
        admin_client_.post(f"/jobs/extraction/{job.pk}/resume/")
        assert ConsoleJob.objects.get(pk=job.pk).status == "running"

        backdate(ConsoleJob, job.pk)
        page = admin_client_.get(f"/cuad/runs/jobs/{job.pk}/").content.decode()
        assert f"{STALE_TEXT} (no progress since" in page and 'name="worker_lost" value="1"' in page
        response = admin_client_.post(f"/jobs/extraction/{job.pk}/resume/", {"worker_lost": "1"})
        assert response.status_code == 302
        assert ConsoleJob.objects.get(pk=job.pk).status == "queued"
        done = job_extract_execute(job_id=job.pk)  # what the queued task does
        assert done.status == "done", done.error
        assert len(server.requests) == 4 and server.max_count_per_body == 1
        assert Receipt.objects.filter(ledger_id=job.ledger_id).count() == 4
        assert done.heartbeat_at is not None and not is_stale(done)


def test_a_stale_running_audit_resumes_from_its_page_and_sends_no_request_twice(
    db, tmp_path, monkeypatch, anthropic_key, admin_client_
):
    _, run = audited_run(tmp_path)
    with LoopbackServer(verdicts_reply) as server:
        a = parse_choice("anthropic:claude-judge-a", base_url=server.url)
        b = parse_choice("anthropic:claude-judge-b", base_url=server.url)
        # the recorded usage (2924 input tokens with cache) is far above these small requests' estimates
        audit, _ = audit_create(run=run, judge_a=a, judge_b=b, max_input_tokens=100_000, queue=False)
        ledgers = list(audit.judges.values_list("ledger_id", flat=True))
        Ledger.objects.filter(pk__in=ledgers).update(concurrency=1)
        with monkeypatch.context() as m:
            die_on_beat(m, "grading.audits.services", 3)
            with pytest.raises(WorkerKilled):
                audit_execute(audit_id=audit.pk)
        audit.refresh_from_db()
        assert audit.status == "running" and len(server.requests) == 2

        assert STALE_TEXT not in admin_client_.get(f"/cuad/audits/{audit.pk}/").content.decode()
        response = admin_client_.post(f"/jobs/audit/{audit.pk}/resume/", {"worker_lost": "1"}, follow=True)
        assert "is still running and made progress" in response.content.decode()
        assert Audit.objects.get(pk=audit.pk).status == "running"

        backdate(Audit, audit.pk)
        page = admin_client_.get(f"/cuad/audits/{audit.pk}/").content.decode()
        assert f"{STALE_TEXT} (no progress since" in page
        assert admin_client_.post(f"/jobs/audit/{audit.pk}/resume/", {"worker_lost": "1"}).status_code == 302
        assert Audit.objects.get(pk=audit.pk).status == "queued"
        done = audit_execute(audit_id=audit.pk)
        assert done.status == "done", done.error
        assert len(server.requests) == 2 * audit.n_candidates and server.max_count_per_body == 1
        assert Receipt.objects.filter(ledger_id__in=ledgers).count() == len(server.requests)


def test_only_admins_may_resume_a_stale_job_or_audit(db, tmp_path, reviewer_client, stakeholder_client):
    loaded, run = audited_run(tmp_path)
    job = ConsoleJob.objects.create(kind="extract", dataset=loaded.dataset, status="running", total=1)
    backdate(ConsoleJob, job.pk)
    audit, _ = audit_create(
        run=run, judge_a=parse_choice("local-description"), judge_b=parse_choice("local-exemplars"), queue=False
    )
    Audit.objects.filter(pk=audit.pk).update(status="running")
    backdate(Audit, audit.pk)
    for client in (reviewer_client, stakeholder_client):
        assert client.post(f"/jobs/extraction/{job.pk}/resume/", {"worker_lost": "1"}).status_code == 403
        assert client.post(f"/jobs/audit/{audit.pk}/resume/", {"worker_lost": "1"}).status_code == 403
    assert STALE_TEXT not in stakeholder_client.get(f"/cuad/runs/jobs/{job.pk}/").content.decode()
    assert STALE_TEXT not in stakeholder_client.get(f"/cuad/audits/{audit.pk}/").content.decode()
    assert reviewer_client.get(f"/cuad/runs/jobs/{job.pk}/").status_code == 403
    assert ConsoleJob.objects.get(pk=job.pk).status == "running"
    assert Audit.objects.get(pk=audit.pk).status == "running"
