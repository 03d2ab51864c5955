"""Launch, resume or cancel a rerank run from the command line.

  manage.py rerank --suite nrs_v1 --provider local                    # queue on Celery
  manage.py rerank --retrieval-run 3 --provider openai_compatible --model openai/gpt-4o-mini --sync
  manage.py rerank --resume 7 [--reattempt] [--sync]
  manage.py rerank --resume 7 --reattempt --add-requests 2 --reason "re-attempt the 2 unknown after the crash"
  manage.py rerank --cancel 7

Without --sync the run is queued for a Celery worker; the command first asks the workers
(``celery inspect ping``, a couple of seconds at most) and refuses, saying how to run it in this
process, when none answers. With --sync the run executes here; a run that ends failed exits non-zero.
A running run is taken over only when its worker is gone: its heartbeat is older than the run's stale timeout
(30 s for the local model, max(30, 2 x PROVIDER_TIMEOUT_SECONDS) for remote providers), or ``celery inspect``
shows its worker no longer runs it, or --worker-lost says so; otherwise the command says which worker holds it,
since when, its last heartbeat and the timeout. --add-requests / --add-input-tokens raise the run's budget
(recorded in its ledger with --reason and who ran the command) before resuming.
A provider that is not configured (no key in the environment, malformed base URL, no model id) is refused
before anything is created or queued, with a message naming what is missing; the command exits non-zero.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankRun, RerankStatus
from benchmarks.rerank.questions import DEFAULT_VERSION
from benchmarks.retrieval.models import RetrievalRun, RunStatus
from reviewapp.core.jobs import celery_app
from reviewapp.jobs.controls import job_finish_command

PING_TIMEOUT_SECONDS = 1.5


def celery_workers_answering(timeout: float = PING_TIMEOUT_SECONDS) -> list[str]:
    """Names of the Celery workers that answer a ping within ``timeout`` seconds ([] when none, or no broker)."""
    try:
        replies = celery_app().control.ping(timeout=timeout) or []
    except Exception:  # an unreachable broker is "no worker" to the person at the command line
        return []
    return sorted(name for reply in replies for name in reply)


def _runs_eagerly() -> bool:
    return bool(getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False) or celery_app().conf.task_always_eager)


class Command(BaseCommand):
    help = "Rerank a retrieval run's candidates with a pinned model (budgeted, receipted, resumable)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--suite", help="suite name or name@version (uses its latest finished retrieval run)")
        parser.add_argument("--retrieval-run", type=int)
        parser.add_argument("--provider", choices=["local", "openai_compatible", "anthropic"], default="local")
        parser.add_argument("--model", default="", help="pinned model id")
        parser.add_argument("--method", default="", help="logprobs / structured / 'local heuristic'")
        parser.add_argument("--question", default=DEFAULT_VERSION)
        parser.add_argument("--per-request", type=int, default=rerank.DEFAULT_CANDIDATES_PER_REQUEST)
        parser.add_argument("--max-requests", type=int)
        parser.add_argument("--max-input-tokens", type=int, default=rerank.DEFAULT_MAX_INPUT_TOKENS)
        parser.add_argument("--concurrency", type=int)
        parser.add_argument("--base-url", default="",
                            help="the model server for this run, e.g. http://127.0.0.1:11434/v1 (Ollama); default "
                                 "OPENAI_COMPATIBLE_BASE_URL / ANTHROPIC_BASE_URL; no credentials in the URL")
        parser.add_argument("--cancel", type=int, metavar="RUN_ID")
        parser.add_argument("--sync", action="store_true", help="execute in this process instead of queueing")

    def handle(self, *args, **o) -> None:
        try:
            if o["cancel"]:
                run = rerank.rerank_run_cancel(run=self._run(o["cancel"]))
                self.stdout.write(f"run #{run.pk}: {run.status} (cancel requested)")
                return
            # Before asking for workers: a missing key is the message the person needs, not a missing worker.
            rerank.rerank_preflight(provider=o["provider"], model_id=o["model"], base_url=o["base_url"])
            if not o["sync"] and not _runs_eagerly() and not celery_workers_answering():
                raise CommandError(
                    f"no Celery worker answered within {PING_TIMEOUT_SECONDS:g} s, so a queued run would wait. "
                    "Start one (`celery -A reviewapp worker -l info`) or run it in this process: repeat the "
                    "command with --sync.")
            run = rerank.rerank_run_create(
                retrieval_run=self._retrieval_run(o), provider=o["provider"], model_id=o["model"],
                method=o["method"], question_version=o["question"], candidates_per_request=o["per_request"],
                max_requests=o["max_requests"], max_input_tokens=o["max_input_tokens"],
                concurrency=o["concurrency"], base_url=o["base_url"], enqueue=not o["sync"],
            )
        except rerank.RerankError as error:
            raise CommandError(str(error)) from None
        where = f" at {run.ledger.base_url}" if run.ledger.base_url else ""
        self.stdout.write(f"run #{run.pk}: {run.requests_planned} requests planned for {run.candidates_planned} "
                          f"candidates ({run.provider}:{run.model_id}{where}, {run.method_label})")
        if o["sync"]:
            status = rerank.rerank_run_execute(run_id=run.pk)
            progress = rerank.rerank_run_progress(run=run)  # also refreshes run
            self.stdout.write(
                f"run #{run.pk}: {status or run.status}; graded {progress.graded}, failed {progress.failed}, "
                f"unknown {progress.unknown}; {progress.spend.requests} requests, "
                f"{progress.spend.input_tokens} input tokens" + (f"; stopped: {run.stop_reason}" if run.stop_reason
                                                                 else "")
                + ("; simulated provider (the loopback test server's answers, not a model's)"
                   if run.simulated else "")
            )
            if status == RerankStatus.FAILED or run.status == RerankStatus.FAILED:
                raise CommandError(f"run #{run.pk} failed: {run.error or 'see the run page'}")
            finish = job_finish_command(run)
            if finish:
                self.stdout.write(f"to finish: {finish}")
        else:
            run.refresh_from_db()  # with eager tasks (tests, demos) the run has already executed
            if run.status == RerankStatus.FAILED:
                raise CommandError(f"run #{run.pk} failed: {run.error or 'see the run page'}")
            self.stdout.write(f"run #{run.pk} queued; watch /benchmarks/rerank/{run.pk}/")

    def _run(self, pk: int) -> RerankRun:
        try:
            return RerankRun.objects.get(pk=pk)
        except RerankRun.DoesNotExist:
            raise CommandError(f"no rerank run #{pk}") from None

    def _retrieval_run(self, o) -> RetrievalRun:
        if o["retrieval_run"]:
            try:
                return RetrievalRun.objects.get(pk=o["retrieval_run"])
            except RetrievalRun.DoesNotExist:
                raise CommandError(f"no retrieval run #{o['retrieval_run']}") from None
        if not o["suite"]:
            raise CommandError("give --retrieval-run or --suite")
        name, _, version = o["suite"].partition("@")
        runs = RetrievalRun.objects.filter(suite__name=name, status=RunStatus.DONE)
        if version:
            runs = runs.filter(suite__version=int(version))
        run = runs.order_by("-id").first()
        if run is None:
            raise CommandError(f"suite {o['suite']!r} has no finished retrieval run; run `manage.py retrieve` first")
        return run
