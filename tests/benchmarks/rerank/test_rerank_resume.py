"""Kill the executor mid-run, resume, and compare with an uninterrupted run.

With TEST_REAL_WORKER=1 a Celery worker subprocess of our own (on a dedicated queue)
is SIGKILLed mid-run and the shared worker resumes the run; otherwise the executor
is stopped abruptly in-process (a BaseException escapes mid-flight, exactly what a
kill leaves behind: an open claim, receipts sent without an answer). Either way the
loopback holds every request after the first few until the kill, so the run dies
at the same point with requests in flight however fast the machine or the engine.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankGrade, RerankRun
from benchmarks.rerank.tasks import rerank_run_execute
from reviewapp.core.jobs import job_kind_resume
from reviewapp.core.records.hashing import canonical_json, sha256_hex
from reviewapp.providers.loopback import LoopbackServer, default_responder
from reviewapp.providers.models import Ledger, Receipt
from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run
from tests.conftest import REPO_ROOT
from tests.helpers import Gate, wait_until

KILL_QUEUE = "rerank-kill-test"
ANSWERED_BEFORE_KILL = 6


class SimulatedKill(BaseException):
    """Not an Exception: nothing in the executor may catch it, as nothing can catch SIGKILL."""


def _answered(run) -> int:
    return Receipt.objects.filter(ledger=run.ledger, status="answered").count()


def _kill_mid_run(run, worker_info, tmp_path, gate: Gate) -> int:
    """Kill the run's executor with requests held at the gate; how many it left in flight."""
    if worker_info is None:
        calls = []

        def before_send():
            calls.append(1)
            # The request after the answered ones is held at the gate, so its receipt is open. Released, it lets
            # the executor's thread pool end on the way out; its answer is never recorded, as after a kill.
            if len(calls) > ANSWERED_BEFORE_KILL + 1:
                gate.release.set()
                raise SimulatedKill

        with contextlib.suppress(SimulatedKill):
            rerank.rerank_run_execute(run_id=run.pk, before_send=before_send)
        return 1  # the next request was never opened: the kill came before its receipt
    log = open(tmp_path / "kill-worker.log", "w")  # noqa: SIM115 - closed below
    env = {**os.environ, "DATABASE_URL": worker_info["database_url"], "CELERY_TASK_ALWAYS_EAGER": "0"}
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "reviewapp", "worker", "--pool=solo", "-Q", KILL_QUEUE,
         "-n", f"killtest-{os.getpid()}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        rerank_run_execute.apply_async(args=[run.pk], queue=KILL_QUEUE)
        # Both slots (concurrency 2) hold a request at the gate: the worker sends nothing more until it dies.
        wait_until(lambda: gate.seen >= ANSWERED_BEFORE_KILL + 2, timeout=180)
    finally:
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
        log.close()
        gate.release.set()  # the held requests answer a dead connection; the resumed run's pass straight through
    return 2


def _results(run) -> list[tuple]:
    return [(g.candidate_id, g.status, g.grade, g.p0, g.p1, g.p2, g.p3, g.p_useful, g.confidence, g.captured_mass)
            for g in rerank.rerank_run_grades(run=run)]


def _wait_finished(run) -> RerankRun:
    return wait_until(lambda: (r := RerankRun.objects.get(pk=run.pk)).is_finished and r, timeout=120)


def test_a_killed_run_resumes_without_resending_and_ends_identical_to_an_uninterrupted_one(
    celery_worker, settings, tmp_path
):
    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}
    retrieval_run = synthetic_retrieval_run(seed=21)
    gate = Gate(default_responder, first=ANSWERED_BEFORE_KILL + 1)
    with LoopbackServer(gate) as server:
        run = rerank.rerank_run_create(retrieval_run=retrieval_run, provider="openai_compatible", model_id="loop/m",
                                       base_url=server.url + "/v1", concurrency=2, enqueue=False)
        in_flight = _kill_mid_run(run, celery_worker, tmp_path, gate)
        run.refresh_from_db()
        assert run.status == "running"  # the dead executor never finished it
        assert _answered(run) == ANSWERED_BEFORE_KILL < run.requests_planned
        # the abrupt stop left the requests in flight with open receipts
        open_receipts = Receipt.objects.filter(ledger=run.ledger, status="sent").count()
        assert open_receipts == in_flight

        settings.JOB_STALE_SECONDS = 0  # the test knows the worker is dead
        job_kind_resume(run, take_over=True)
        run = _wait_finished(run)
        # The same loss ends as every kind ends it: incomplete, with the command that finishes it.
        assert run.status == "failed" and run.executions == 2
        # Each request in flight held up to candidates_per_request candidates (a query's last request may hold fewer).
        unknown = int(re.match(r"incomplete: (\d+) of ", run.error).group(1))
        assert open_receipts <= unknown <= open_receipts * run.candidates_per_request, run.error
        assert f"(unknown {unknown})" in run.error
        assert "unknown" in run.error and f"To finish: python manage.py finish_job rerank {run.pk}" in run.error

        # No request was sent twice, and every planned request has exactly one receipt.
        assert server.max_count_per_body == 1
        plan_keys = [g.request_key for g in rerank.rerank_run_grades(run=run)]
        receipts = list(Receipt.objects.filter(ledger=run.ledger).order_by("seq"))
        assert len(receipts) == run.requests_planned == len(set(plan_keys))
        assert {r.request_key for r in receipts} == set(plan_keys)
        assert [r.seq for r in receipts] == list(range(1, run.requests_planned + 1))
        unknown = [r for r in receipts if r.status == "unknown"]
        assert len(unknown) == open_receipts  # disclosed, not resent
        assert all(r.status == "answered" for r in receipts if r.status != "unknown")
        progress = rerank.rerank_run_progress(run=run)
        assert progress.unknown == sum(1 for g in rerank.rerank_run_grades(run=run) if g.status == "unknown")
        assert progress.graded + progress.unknown == run.candidates_planned

        # An explicit re-attempt of the unknown requests completes the run, counted against the budget.
        job_kind_resume(run, take_over=True, reattempt=True)
        run = _wait_finished(run)
        assert Receipt.objects.filter(ledger=run.ledger).count() == run.requests_planned + len(unknown)
        assert set(Receipt.objects.filter(ledger=run.ledger, attempt=2).values_list("request_key", flat=True)) \
            == {r.request_key for r in unknown}
        for receipt in Receipt.objects.filter(ledger=run.ledger):
            body_sha = sha256_hex(canonical_json(receipt.request_body))
            attempts = Receipt.objects.filter(ledger=run.ledger, request_key=receipt.request_key).count()
            assert server.counts[body_sha] <= attempts  # every send the server saw has its receipt

        # The uninterrupted run asks the same server, its gate open and its counts checked: a second server
        # cost up to half a second more on the way out (http.server polls for shutdown every 0.5 s).
        reference = rerank.rerank_run_create(retrieval_run=retrieval_run, provider="openai_compatible",
                                             model_id="loop/m", base_url=server.url + "/v1",
                                             concurrency=2, enqueue=False)
        assert rerank.rerank_run_execute(run_id=reference.pk) == "done"
    assert _results(run) == _results(reference)
    assert all(row[1] == RerankGrade.Status.GRADED for row in _results(run))


def test_a_local_model_run_taken_over_after_a_death_recomputes_every_item_instead_of_leaving_it_unknown(db):
    from reviewapp.providers import services as provider_services

    run = rerank.rerank_run_create(retrieval_run=synthetic_retrieval_run(), provider="local", enqueue=False)
    Ledger.objects.filter(pk=run.ledger_id).update(max_requests=run.requests_planned)
    completions: list[int] = []
    original = provider_services.receipt_complete

    def dying(**kwargs):
        completions.append(1)
        if len(completions) > 2:
            raise SimulatedKill  # the answer was computed; the process died before recording it
        return original(**kwargs)

    provider_services.receipt_complete = dying
    try:
        with contextlib.suppress(SimulatedKill):
            rerank.rerank_run_execute(run_id=run.pk)
    finally:
        provider_services.receipt_complete = original
    assert Receipt.objects.filter(ledger=run.ledger, status="sent").count() == 1

    job_kind_resume(RerankRun.objects.get(pk=run.pk), take_over=True, enqueue=False, force=True)
    # No budget raise: the budget is exactly one request per planned request, and recomputing is free.
    assert rerank.rerank_run_execute(run_id=run.pk) == "done"
    grades = rerank.rerank_run_grades(run=RerankRun.objects.get(pk=run.pk))
    assert len(grades) == run.candidates_planned
    assert {g.status for g in grades} == {RerankGrade.Status.GRADED}  # none left unknown
    receipts = Receipt.objects.filter(ledger=run.ledger)
    assert receipts.filter(status="unknown").count() == 1  # the death stays disclosed in the ledger
    assert receipts.filter(status="answered").count() == run.requests_planned
