"""An extraction job keeps one execution at a time: a worker that was paused (not dead) while an admin resumed
its job elsewhere wakes up to find its claim gone, and writes nothing: no extra progress, no second finish."""

from __future__ import annotations

import pytest

from grading.runs.jobs import _extract_local, extraction_job_create, job_extract_execute
from grading.runs.models import ConsoleJob
from reviewapp.core.jobs import ClaimLost, job_claim, job_finish, job_kind_resume
from tests.grading.console_support import load


def test_a_paused_execution_that_lost_its_claim_writes_nothing_after_the_resumed_one_finished(
        db, tmp_path, low_threshold):
    loaded = load(tmp_path)
    job = extraction_job_create(sample=loaded.sample, provider="local", limit=2, queue=False)
    paused_token = job_claim(ConsoleJob, pk=job.pk, stage="extracting")  # the first execution, then SIGSTOP
    assert paused_token

    job_kind_resume(job, force=True, enqueue=False)
    job_extract_execute(job_id=job.pk)  # another worker takes it over and finishes
    job.refresh_from_db()
    finished = (job.status, job.done, job.finished_at, job.run_id, job.executions)
    assert job.status == ConsoleJob.Status.DONE and job.done == job.total == 2 and job.executions == 2

    # SIGCONT: the old execution carries on with the contracts it had not done when it stopped.
    job.contracts.update(done=False)
    with pytest.raises(ClaimLost):
        _extract_local(job, paused_token)
    assert not job_finish(ConsoleJob, pk=job.pk, token=paused_token, status=ConsoleJob.Status.FAILED)
    job.refresh_from_db()
    assert (job.status, job.done, job.finished_at, job.run_id, job.executions) == finished


def test_the_same_task_delivered_twice_runs_once(db, tmp_path, low_threshold):
    loaded = load(tmp_path)
    job = extraction_job_create(sample=loaded.sample, provider="local", limit=1, queue=False)
    assert job_extract_execute(job_id=job.pk) is not None
    assert job_extract_execute(job_id=job.pk) is None  # the second delivery finds nothing to claim
    job.refresh_from_db()
    assert job.executions == 1 and job.done == 1
