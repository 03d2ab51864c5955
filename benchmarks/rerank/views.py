"""Rerank run pages: launch form, run page, cancel, receipts (its resume and progress: ``reviewapp.jobs``).

Admins (``reviewapp.launch_runs``) launch, cancel and resume; stakeholders may watch;
reviewers get 403 on all of it.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.core.paginator import Page, Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankGrade, RerankRun
from benchmarks.rerank.questions import DEFAULT_VERSION, question_definitions
from benchmarks.retrieval.models import RetrievalCandidate, RetrievalRun, RunStatus
from reviewapp.core.auth.roles import LAUNCH_RUNS, VIEW_REPORTS, perm_required
from reviewapp.core.exports.downloads import stream_download
from reviewapp.core.http.requests import HtmxHttpRequest
from reviewapp.jobs.controls import job_progress_context
from reviewapp.providers.clients.base import echoable_base_url
from reviewapp.providers.selectors import receipts_jsonl
from reviewapp.providers.types import METHOD_LOCAL, METHOD_LOGPROBS, METHOD_STRUCTURED

GRADES_PER_PAGE = 100
NOT_SENT = "not_sent"
# The grades table filter: a grade row's status, or planned candidates that have no grade row at all.
GRADE_FILTERS = [*RerankGrade.Status.choices, (NOT_SENT, "not sent")]


class NoCredentialsInput(forms.TextInput):
    """A base URL field that never shows back a value carrying credentials (refused, and never echoed)."""

    def format_value(self, value: object) -> str | None:
        text = super().format_value(value)
        return echoable_base_url(text) or None if text else text


class RerankRunForm(forms.Form):
    retrieval_run = forms.ModelChoiceField(
        queryset=RetrievalRun.objects.filter(status=RunStatus.DONE).select_related("suite").order_by("-id"),
        help_text="the suite comes with the retrieval run",
    )
    provider = forms.ChoiceField(choices=[
        ("local", "local heuristic (MiniLM ONNX, offline; not an LLM)"),
        ("openai_compatible", "OpenAI-compatible (OpenRouter, vLLM, llama.cpp, Ollama)"),
        ("anthropic", "Anthropic"),
    ], initial="local")
    model_id = forms.CharField(required=False, max_length=200, help_text="pinned model id (blank = local model)")
    base_url = forms.CharField(
        required=False, max_length=500, label="Base URL", widget=NoCredentialsInput,
        help_text="the model server for this run, e.g. http://127.0.0.1:11434/v1 (Ollama); blank = the server's "
                  "default. No credentials in the URL: a key, if the server needs one, stays in this server's "
                  "environment.",
    )
    method = forms.ChoiceField(required=False, choices=[
        ("", "provider default"), (METHOD_LOGPROBS, "logprobs"), (METHOD_STRUCTURED, "structured JSON answer"),
        (METHOD_LOCAL, "local heuristic"),
    ])
    question_version = forms.ChoiceField(initial=DEFAULT_VERSION)
    candidates_per_request = forms.IntegerField(min_value=1, max_value=30, initial=4)
    # Upper bounds: what the ledger's columns hold (beyond them the database refused with a 500).
    max_requests = forms.IntegerField(min_value=1, max_value=2**31 - 1, initial=rerank.DEFAULT_MAX_REQUESTS,
                                      help_text="attempted requests, re-attempts included")
    max_input_tokens = forms.IntegerField(min_value=1, max_value=2**63 - 1, initial=rerank.DEFAULT_MAX_INPUT_TOKENS)
    concurrency = forms.IntegerField(min_value=1, max_value=64, required=False, help_text="blank = provider default")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        question_version = self.fields["question_version"]
        assert isinstance(question_version, forms.ChoiceField)  # declared above
        question_version.choices = [(v, f"{v} ({d.sha256[:12]})") for v, d in question_definitions().items()]


@perm_required(VIEW_REPORTS)
def rerank_run_list(request: HttpRequest) -> HttpResponse:
    return render(request, "benchmarks/rerank_list.html", {"runs": rerank.rerank_run_list()})


@perm_required(LAUNCH_RUNS)
@require_http_methods(["GET", "POST"])
def rerank_run_new(request: HttpRequest) -> HttpResponse:
    form = RerankRunForm(request.POST or None, initial={"retrieval_run": request.GET.get("retrieval_run")})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            run = rerank.rerank_run_create(
                retrieval_run=data["retrieval_run"], provider=data["provider"], model_id=data["model_id"],
                method=data["method"], question_version=data["question_version"],
                candidates_per_request=data["candidates_per_request"], max_requests=data["max_requests"],
                max_input_tokens=data["max_input_tokens"], concurrency=data["concurrency"],
                base_url=data["base_url"].strip(), user=request.user,
            )
        except (rerank.RerankError, ValueError) as error:
            form.add_error(None, str(error))
        else:
            # No flash message: the run page states "queued" itself, from the status, so it cannot go stale.
            return redirect("benchmarks:rerank-run", pk=run.pk)
    return render(request, "benchmarks/rerank_new.html", {"form": form})


@perm_required(VIEW_REPORTS)
def rerank_run_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(RerankRun.objects.select_related("suite", "retrieval_run", "ledger"), pk=pk)
    # A finished run's grades are read once, for its progress and its grades table (reading them twice, and every
    # planned candidate with its section, took a run of a thousand grades past 300 ms).
    grades = rerank.rerank_run_grades(run=run) if run.is_finished else None
    progress = rerank.rerank_run_progress(run=run, grades=grades)
    context = {**job_progress_context(run), "run": run, "progress": progress}
    if run.is_finished:
        context.update(grades_table(run=run, status=request.GET.get("status", ""), page=request.GET.get("page"),
                                    grades=grades))
    return render(request, "benchmarks/rerank_run.html", context)


def grades_table(*, run: RerankRun, status: str, page: str | None, grades: list[RerankGrade] | None = None) -> dict:
    """One page of the run's grades (latest attempt per candidate), optionally of one status, with each section.

    "not sent" rows are planned candidates without any grade row (nothing left this server for them): counted,
    and read a page at a time, in the database. ``grades``: the run's grades when the caller has read them.
    """
    grades = rerank.rerank_run_grades(run=run) if grades is None else grades
    counts = {value: 0 for value, _ in GRADE_FILTERS}
    for grade in grades:
        counts[grade.status] += 1
    not_sent = RetrievalCandidate.objects.filter(
        result__run=run.retrieval_run, result__query__kind__in=rerank.RERANKED_KINDS,
    ).exclude(pk__in=RerankGrade.objects.filter(run=run).values("candidate_id"))
    paged: Page[tuple[str, str]] | Page[RerankGrade]
    rows: list[dict[str, Any]]
    if status == NOT_SENT:
        paged = Paginator(not_sent.order_by("result__query__position", "rank").values_list(
            "result__query__qid", "provision__citation"), GRADES_PER_PAGE).get_page(page)
        counts[NOT_SENT] = paged.paginator.count
        rows = [{"qid": qid, "citation": citation, "status": "not sent", "grade": None}
                for qid, citation in paged.object_list]
    else:
        counts[NOT_SENT] = not_sent.count()
        chosen = [g for g in grades if g.status == status] if status in counts else grades
        paged = Paginator(chosen, GRADES_PER_PAGE).get_page(page)
        citations = dict(RetrievalCandidate.objects.filter(
            pk__in=[g.candidate_id for g in paged.object_list]).values_list("pk", "provision__citation"))
        rows = [{"qid": g.query.qid, "citation": citations.get(g.candidate_id, ""), "status": g.get_status_display(),
                 "grade": g} for g in paged.object_list]
    return {
        "grades_shown": True, "grades_sent": len(grades), "grades_page": paged, "grade_rows": rows,
        "grade_filter": status if status in counts else "",
        "grade_filters": [(value, label, counts[value]) for value, label in GRADE_FILTERS],
        "grades_query_prefix": f"status={status}&" if status in counts else "",
    }


@perm_required(LAUNCH_RUNS)
@require_POST
def rerank_run_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    run = rerank.rerank_run_cancel(run=get_object_or_404(RerankRun, pk=pk))
    messages.info(request, f"Cancel requested for run #{run.pk}; requests in flight finish and are recorded.")
    return redirect("benchmarks:rerank-run", pk=pk)


@perm_required(VIEW_REPORTS)
def rerank_run_receipts(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    run = get_object_or_404(RerankRun.objects.select_related("ledger"), pk=pk)
    return stream_download(receipts_jsonl(ledger=run.ledger), filename=f"rerank-{run.pk}-receipts.jsonl")
