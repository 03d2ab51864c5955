"""The lifecycle parts every job kind shares: the resume form's budget raise, the resume refusal, the options
of a finish command. The kinds' own tests (rerank, extraction jobs, audits) drive them through pages and
commands; here each part is checked once, on a rerank run standing in for every kind."""

from __future__ import annotations

import random

import pytest
from django.http import QueryDict

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankRun
from reviewapp.core import jobs
from reviewapp.jobs import controls as job_controls
from reviewapp.providers.selectors import Shortfall, resume_options
from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run


class KindError(ValueError):
    pass


def test_the_budget_raise_of_a_resume_form_is_read_once_for_every_kind():
    assert job_controls.budget_raise_input(QueryDict("reattempt=1"), raises=KindError) == {}
    assert job_controls.budget_raise_input(QueryDict("add_requests=3&reason=+why+"), raises=KindError) == {
        "add_requests": 3, "add_input_tokens": 0, "reason": "why"}
    with pytest.raises(KindError, match="add_input_tokens: 'x' is not a whole number"):
        job_controls.budget_raise_input(QueryDict("add_input_tokens=x"), raises=KindError)
    with pytest.raises(KindError, match="add_requests: must be between 0 and 2147483647"):
        job_controls.budget_raise_input(QueryDict("add_requests=-1"), raises=KindError)


def test_a_job_outside_the_resumable_statuses_is_refused_in_the_kinds_own_error(db):
    run = rerank.rerank_run_create(retrieval_run=synthetic_retrieval_run(), provider="local", enqueue=False)
    with pytest.raises(KindError, match=rf"^run {run.pk} is queued; only a failed run can be resumed$"):
        jobs.job_resume(run, what=f"run {run.pk}", raises=KindError, resumable=["failed"], force=True,
                        refused="only a failed run can be resumed", changes=lambda run: {})
    RerankRun.objects.filter(pk=run.pk).update(status="failed", error="boom")
    sent = []
    resumed = jobs.job_resume(run, what="run", raises=KindError, resumable=["failed"], force=True,
                              changes=lambda run: {"error": ""}, enqueue=sent.append)
    assert (resumed.status, resumed.error, sent) == ("queued", "", [resumed])


def _reference_options(shortfalls: list[Shortfall]) -> str:
    # Written out the long way, as the three kinds did before they shared resume_options.
    parts = []
    if sum(s.reattempts for s in shortfalls):
        parts.append("--reattempt")
    requests = max([0] + [s.extra_requests for s in shortfalls])
    tokens = max([0] + [s.extra_input_tokens for s in shortfalls])
    if requests:
        parts.append(f"--add-requests {requests}")
    if tokens:
        parts.append(f"--add-input-tokens {tokens}")
    if requests or tokens:
        parts.append('--reason "why the budget is raised"')
    return "".join(" " + part for part in parts)


def test_the_options_of_a_finish_command_cover_the_largest_shortfall_of_the_jobs_ledgers():
    draw = random.Random(34)
    for _ in range(200):
        shortfalls = [Shortfall(reattempts=draw.choice([0, 0, 2]), unsent=draw.randint(0, 3),
                                extra_requests=draw.choice([0, draw.randint(1, 9)]),
                                extra_input_tokens=draw.choice([0, draw.randint(1, 9999)]))
                      for _ in range(draw.randint(0, 3))]
        assert resume_options(shortfalls) == _reference_options(shortfalls)
