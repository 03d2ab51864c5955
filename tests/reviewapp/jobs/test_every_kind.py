"""Every registered job kind, one loss: a request lost in flight (its executor killed while the request was out),
the job taken over and resumed. Each kind must end in the same state, worded the same on its page, in its progress
fragment and in its API; its forms must post the same fields; its progress must poll at the one interval; and
the finish command its state names must finish it."""

from __future__ import annotations

import io
import re
import shlex
from dataclasses import dataclass
from html import escape
from html.parser import HTMLParser
from typing import Any

import pytest
from django.core.management import call_command

from reviewapp.core.jobs import job_kind, job_kind_resume, job_kinds, job_task
from reviewapp.jobs.controls import POLL_SECONDS, job_state
from reviewapp.providers.loopback import LoopbackServer, default_responder
from reviewapp.providers.models import Ledger, Receipt

KEY = "sk-ant-test-every-kind"


class SimulatedKill(BaseException):
    """Not an Exception: nothing in an executor may catch it, as nothing can catch SIGKILL."""


@dataclass
class Case:
    job: Any
    server: LoopbackServer
    page: str
    api: str
    api_part: str  # the key of the job in the API's answer ('' when the answer is the job)
    listing: str  # the page that lists the kind's jobs


def _rerank(tmp_path, settings) -> Case:
    from benchmarks.rerank import services as rerank
    from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run

    server = LoopbackServer(default_responder).__enter__()
    run = rerank.rerank_run_create(retrieval_run=synthetic_retrieval_run(seed=5), provider="openai_compatible",
                                   model_id="loop/m", base_url=server.url + "/v1", concurrency=1, enqueue=False)
    return Case(run, server, f"/benchmarks/rerank/{run.pk}/", f"/api/v1/benchmarks/rerank-runs/{run.pk}/", "run",
                "/benchmarks/rerank/")


def _extraction(tmp_path, settings) -> Case:
    from grading.runs.jobs import extraction_job_create
    from tests.grading.anthropic_support import quotes_reply
    from tests.grading.console_support import load

    loaded = load(tmp_path)
    server = LoopbackServer(quotes_reply).__enter__()
    job = extraction_job_create(sample=loaded.sample, provider="anthropic", model_id="claude-test",
                                base_url=server.url, queue=False)
    return Case(job, server, f"/cuad/runs/jobs/{job.pk}/", f"/api/v1/cuad/jobs/{job.pk}/", "", "/cuad/runs/")


def _audit(tmp_path, settings) -> Case:
    from grading.audits.judging.judges import parse_choice
    from grading.audits.services import audit_create
    from tests.grading.anthropic_support import verdicts_reply
    from tests.grading.audit_support import audited_run

    _, run = audited_run(tmp_path)
    server = LoopbackServer(verdicts_reply).__enter__()
    audit, _ = audit_create(run=run, judge_a=parse_choice("anthropic:claude-judge-a", base_url=server.url),
                            judge_b=parse_choice("anthropic:claude-judge-b", base_url=server.url),
                            max_input_tokens=100_000, queue=False)
    return Case(audit, server, f"/cuad/audits/{audit.pk}/", f"/api/v1/cuad/audits/{audit.pk}/", "audit",
                "/cuad/audits/")


# Every registered kind has a case here: a kind registered without one fails test_every_kind_has_a_case.
CASES = {"rerank": _rerank, "extraction": _extraction, "audit": _audit}


def test_every_registered_kind_has_a_case():
    assert sorted(kind.name for kind in job_kinds()) == sorted(CASES)


class _Forms(HTMLParser):
    """The fields of each form posted to ``action``, by its data-testid; and every hx-trigger on the page."""

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action, self.forms, self.triggers, self.polls = action, {}, [], []
        self._current: set[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if "hx-trigger" in a:
            self.triggers.append(a["hx-trigger"])
            self.polls.append(a.get("hx-get"))
        if tag == "form" and a.get("action") == self.action:
            self._current = self.forms.setdefault(a.get("data-testid") or "", set())
        elif tag in ("input", "button") and self._current is not None and a.get("name"):
            self._current.add(a["name"] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._current = None


def _forms(client, case: Case, kind_name: str) -> _Forms:
    parser = _Forms(f"/jobs/{kind_name}/{case.job.pk}/resume/")
    parser.feed(client.get(case.page).content.decode())
    return parser


def _api_state(client, case: Case) -> dict:
    data = client.get(case.api).json()
    return (data[case.api_part] if case.api_part else data)["state"]


def _kill_in_flight(monkeypatch, job) -> None:
    """Run the job's task; its second request is sent and then the executor dies before the answer."""
    from reviewapp.providers import services

    original, calls = services._attempt, []

    def attempt(client, prepared):
        calls.append(1)
        if len(calls) == 2:
            raise SimulatedKill
        return original(client, prepared)

    with monkeypatch.context() as m:
        m.setattr(services, "_attempt", attempt)
        with pytest.raises(SimulatedKill):
            job_task(job)(job.pk)


@pytest.mark.parametrize("kind_name", sorted(CASES))
def test_a_request_lost_in_flight_ends_every_kind_in_the_same_words_everywhere(
    kind_name, db, tmp_path, settings, monkeypatch, admin_client_
):
    settings.PROVIDER_KEYS = {**settings.PROVIDER_KEYS, "openai_compatible": "", "anthropic": KEY}
    case = CASES[kind_name](tmp_path, settings)
    try:
        job = case.job
        Ledger.objects.filter(pk__in=job_kind(job).ledgers(job)).update(concurrency=1)
        _kill_in_flight(monkeypatch, job)
        job.refresh_from_db()
        assert job.status == "running"
        assert Receipt.objects.filter(ledger_id__in=job_kind(job).ledgers(job), status="sent").count() == 1

        # Running: the page polls its fragment at the one interval, and offers the take-over with worker_lost.
        running = _forms(admin_client_, case, kind_name)
        assert running.triggers == [f"every {POLL_SECONDS}s"]
        assert running.polls == [f"/jobs/{kind_name}/{job.pk}/progress/"]
        assert running.forms == {"takeover-form": {"csrfmiddlewaretoken", "worker_lost"}}
        assert admin_client_.get(f"/jobs/{kind_name}/{job.pk}/progress/").status_code == 200

        settings.JOB_STALE_SECONDS = 0  # the test knows the worker is dead
        job_kind_resume(job, take_over=True, enqueue=False)
        job_task(job)(job.pk)
        job.refresh_from_db()

        state = job_state(job)
        finish = state.finish_command
        # Re-attempting the lost request may need one more request of budget than the job was launched with.
        assert re.fullmatch(rf'python manage.py finish_job {kind_name} {job.pk} --reattempt'
                            r'( --add-requests 1 --reason "why the budget is raised")?', finish), finish
        assert (state.word, state.text) == ("incomplete", f"incomplete: 1 unknown, finish with {finish}"), job.error
        assert job.error.startswith("incomplete: ") and job.error.endswith(f"To finish: {finish}")
        assert escape(state.text) in admin_client_.get(case.page).content.decode()
        fragment = admin_client_.get(f"/jobs/{kind_name}/{job.pk}/progress/")
        assert fragment.status_code == 286 and escape(state.text) in fragment.content.decode()
        assert 'hx-trigger' not in fragment.content.decode()  # finished: nothing polls any more
        assert _api_state(admin_client_, case) == {"state": "incomplete", "state_text": state.text,
                                                   "finish_command": finish}
        listed = admin_client_.get(case.listing).content.decode()
        assert re.search(r'data-testid="job-state"><a class="status-word" [^>]*>incomplete</a>', listed)
        finished = _forms(admin_client_, case, kind_name)
        assert finished.triggers == []
        assert finished.forms == {"resume-form": {"csrfmiddlewaretoken", "reattempt", "add_requests",
                                                  "add_input_tokens", "reason"}}

        # The command the state names finishes the job, and every place then says "done".
        call_command("finish_job", *shlex.split(finish)[3:], "--inline", stdout=io.StringIO())
        job.refresh_from_db()
        assert job_state(job).text == "done" and job.status == "done", job.error
        assert _api_state(admin_client_, case) == {"state": "done", "state_text": "done", "finish_command": ""}
        assert case.server.max_count_per_body == 1  # the lost request was sent once more only when re-attempted
    finally:
        case.server.__exit__(None, None, None)


@pytest.mark.parametrize("kind_name", sorted(CASES))
def test_the_resume_form_of_every_kind_refuses_a_running_job_without_the_take_over(
    kind_name, db, tmp_path, settings, admin_client_
):
    settings.PROVIDER_KEYS = {**settings.PROVIDER_KEYS, "openai_compatible": "", "anthropic": KEY}
    case = CASES[kind_name](tmp_path, settings)
    try:
        kind = job_kind(case.job)
        kind.model.objects.filter(pk=case.job.pk).update(status="running", claim_token="t", worker="w:1")
        response = admin_client_.post(f"/jobs/{kind_name}/{case.job.pk}/resume/", follow=True)
        assert re.search(rf"{kind.noun} {case.job.pk} is running; only a .* can be resumed",
                         response.content.decode())
        assert kind.model.objects.get(pk=case.job.pk).status == "running"
    finally:
        case.server.__exit__(None, None, None)
