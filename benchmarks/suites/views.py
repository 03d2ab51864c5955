"""Pages of suites: a frozen suite (its versions, differences and exports) and the workbench where drafts are
written, checked and frozen. Thin: ``workbench`` edits the document, services write, selectors read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from benchmarks.corpus.selectors import corpus_citation_pattern, corpus_codes, corpus_known
from benchmarks.retrieval.selectors import retrieval_run_list
from benchmarks.snapshots.selectors import suite_source_drift
from benchmarks.suites import confirmation, selectors, services, workbench
from benchmarks.suites.citations import citation_parse
from benchmarks.suites.files import KINDS, SPLITS, SuiteInvalid, SuiteProblem
from benchmarks.suites.models import Suite, SuiteDraft
from reviewapp.core.auth.roles import GRADE, LAUNCH_RUNS, MANAGE_REVIEWS, VIEW_REPORTS, perm_required
from reviewapp.core.exports.downloads import download
from reviewapp.core.http.requests import SignedInHttpRequest
from reviewapp.review.errors import NotAssigned
from reviewapp.review.pools.selectors import pool_item_keys

# --------------------------------------------------------------------------- a frozen suite


@perm_required(VIEW_REPORTS)
def suite_detail(request: SignedInHttpRequest, pk: int) -> HttpResponse:
    suite = get_object_or_404(Suite, pk=pk)
    versions = list(selectors.suite_versions(suite=suite))
    compare = request.GET.get("compare", "")
    if compare:
        base = next((v for v in versions if str(v.version) == compare and v.pk != suite.pk), None)
        if base is None:
            raise Http404(f"suite {suite.name} has no other version {compare!r}")
    else:
        base = selectors.suite_previous(suite=suite)
    return render(request, "benchmarks/suite.html", {
        "suite": suite, "groups": selectors.suite_detail(suite=suite),
        "targets_caveat": selectors.suite_targets_caveat(suite=suite),
        "snapshots": suite.snapshots.order_by("source_key"),
        "drift": suite_source_drift(suite=suite),
        "runs": retrieval_run_list(suite=suite),
        "versions": versions, "base": base,
        "diff": selectors.suite_diff(old=base, new=suite) if base is not None else None,
        "drafts": suite.drafts.order_by("id"),
        "next_drafts": suite.next_drafts.filter(frozen_suite__isnull=True).order_by("id"),
        "confirmation": confirmation.confirmation_summary(suite=suite)
        if request.user.has_perm(MANAGE_REVIEWS) else None,
    })


@perm_required(VIEW_REPORTS)
def suite_export(request: SignedInHttpRequest, pk: int, fmt: str) -> HttpResponse:
    suite = get_object_or_404(Suite, pk=pk)
    try:
        body, content_type, filename = selectors.suite_export(suite=suite, fmt=fmt)
    except ValueError as exc:
        raise Http404(str(exc)) from exc
    return download(body, filename=filename, content_type=content_type)


@perm_required(LAUNCH_RUNS)
@require_POST
def suite_new_version(request: SignedInHttpRequest, pk: int) -> HttpResponse:
    suite = get_object_or_404(Suite, pk=pk)
    draft, created = services.suite_draft_new_version(suite=suite, owner=request.user)
    if created:
        messages.success(request, f"Draft #{draft.pk} is a copy of {suite} as version {draft.document['version']}.")
    else:
        messages.info(request, f"Draft #{draft.pk} is already the open new version of {suite}.")
    return redirect("benchmarks:workbench-draft", pk=draft.pk)


# --------------------------------------------------------------------------- the workbench: drafts


@perm_required(LAUNCH_RUNS)
@require_http_methods(["GET", "POST"])
def workbench_index(request: SignedInHttpRequest) -> HttpResponse:
    error = ""
    name, corpus = request.POST.get("name", "").strip(), request.POST.get("corpus", "")
    if request.method == "POST":
        if not name or len(name) > 100:
            error = "name: required, at most 100 characters"
        elif not corpus_known(corpus=corpus):
            error = f"corpus: must be one of {', '.join(c for c, _ in corpus_codes())}, got {corpus!r}"
        else:
            draft = services.suite_draft_create(owner=request.user, name=name, corpus=corpus)
            return redirect("benchmarks:workbench-draft", pk=draft.pk)
    return render(request, "benchmarks/workbench_index.html", {
        "drafts": selectors.suite_draft_list(), "corpora": corpus_codes(), "error": error,
        "values": {"name": name, "corpus": corpus},
    }, status=400 if error else 200)


# What a pasted suite file is read as (an uploaded file is read by its own name, as import_suite reads it).
PASTE_FORMATS = {"json": "pasted.json", "yaml": "pasted.yaml"}


@perm_required(LAUNCH_RUNS)
@require_POST
def workbench_import(request: SignedInHttpRequest) -> HttpResponse:
    """A draft from a suite file pasted or uploaded, read and checked as ``import_suite`` reads and checks it."""
    upload = request.FILES.get("file")
    if upload is not None:
        raw, filename = upload.read(), upload.name or "uploaded.json"
    else:
        raw = request.POST.get("text", "").encode("utf-8")
        filename = PASTE_FORMATS.get(request.POST.get("format", ""), "pasted.json")
    try:
        if not raw.strip():
            raise SuiteInvalid([SuiteProblem("suite", "file", "empty: paste a suite file or choose one")])
        draft = services.suite_draft_from_file(owner=request.user, raw=raw, filename=filename)
    except SuiteInvalid as exc:
        return render(request, "benchmarks/workbench_index.html", {
            "drafts": selectors.suite_draft_list(), "corpora": corpus_codes(), "values": {},
            "import_error": exc, "pasted": request.POST.get("text", ""),
        }, status=400)
    messages.success(request, f"Draft #{draft.pk} holds {filename}; it is checked as import_suite checks it.")
    return redirect("benchmarks:workbench-draft", pk=draft.pk)


@dataclass
class TargetRow:
    position: int
    citation: str
    provision_id: int | None
    provisional: bool
    nominated_by: str
    note: str


@dataclass
class QueryCard:
    index: int
    q: dict[str, Any]
    targets: list[TargetRow] = field(default_factory=list)
    problems: list[SuiteProblem] = field(default_factory=list)
    error: str = ""


@dataclass
class FamilyRow:
    index: int
    f: dict[str, Any]
    problems: list[SuiteProblem] = field(default_factory=list)


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _editor_context(draft: SuiteDraft, **extra: Any) -> dict[str, Any]:
    """Everything the workbench page and its fragments show: the document laid out per query, with each
    problem of the live check next to the query or family it names."""
    doc = _as_dict(draft.document)
    check = services.suite_draft_check(draft=draft)
    given_corpus = doc.get("corpus")
    corpus = given_corpus if isinstance(given_corpus, str) else ""
    given_queries = doc.get("queries")
    queries = [_as_dict(q) for q in given_queries] if isinstance(given_queries, list) else []
    given_families = doc.get("families")
    families = [_as_dict(f) for f in given_families] if isinstance(given_families, list) else []
    citations = [c for q in queries for c in workbench.target_citations(q)]
    provision_ids = selectors.provision_ids_by_citation(corpus=corpus, citations=citations)
    default_nominator = doc.get("nominated_by") or ""
    claimed: set[int] = set()

    def mine(keys: set[str]) -> list[SuiteProblem]:
        found = [i for i, p in enumerate(check.problems) if p.where in keys]
        claimed.update(found)
        return [check.problems[i] for i in found]

    cards = []
    for index, q in enumerate(queries):
        given_targets = q.get("targets")
        raw_targets = given_targets if isinstance(given_targets, list) else []
        rows = []
        for position, t in enumerate(raw_targets):
            t = t if isinstance(t, dict) else {"citation": str(t)}
            citation = str(t.get("citation", ""))
            rows.append(TargetRow(position, citation, provision_ids.get(citation),
                                  t.get("provisional", True) is not False,
                                  str(t.get("nominated_by") or default_nominator), str(t.get("note") or "")))
        cards.append(QueryCard(index, q, rows, mine({str(q.get("id") or ""), f"queries[{index}]"} - {""})))
    family_rows = [FamilyRow(index, f, mine({str(f.get("id") or ""), f"families[{index}]"} - {""}))
                   for index, f in enumerate(families)]
    general = [p for i, p in enumerate(check.problems) if i not in claimed]
    context = {
        "draft": draft, "doc": doc, "editable": not draft.is_frozen, "check": check, "general_problems": general,
        "cards": cards, "families": family_rows, "family_ids": [str(f.get("id") or "") for f in families],
        "kinds": KINDS, "splits": SPLITS, "corpora": corpus_codes(),
        "synthetic": "" if "synthetic" not in doc else ("true" if doc["synthetic"] else "false"),
        "search": None,
    }
    context.update(extra)
    return context


def _search_context(draft: SuiteDraft, params: Any) -> dict[str, Any]:
    """The corpus search panel: the search text, and the query a result would be nominated for (if any)."""
    doc = _as_dict(draft.document)
    given_corpus = doc.get("corpus")
    corpus = given_corpus if isinstance(given_corpus, str) else ""
    text = params.get("q", "").strip()
    query, index, expect = None, params.get("query", ""), params.get("expect", "")
    given_queries = doc.get("queries")
    queries = given_queries if isinstance(given_queries, list) else []
    if index.isdigit() and int(index) < len(queries) and _as_dict(queries[int(index)]).get("id", "") == expect:
        query = {"index": int(index), **_as_dict(queries[int(index)])}
    nominated: set[str] = set()
    if query is not None:
        code = corpus_citation_pattern(corpus=corpus)
        for written in workbench.target_citations(query):
            parsed = citation_parse(written, default_corpus=corpus, code=code)
            nominated.add(parsed.citation if parsed is not None else written)
    return {"text": text, "query": query, "nominated": nominated,
            "results": selectors.workbench_search(corpus=corpus, text=text) if text else []}


def _draft(pk: int) -> SuiteDraft:
    return get_object_or_404(SuiteDraft.objects.select_related("owner", "frozen_suite", "based_on"), pk=pk)


@perm_required(LAUNCH_RUNS)
def workbench_draft(request: SignedInHttpRequest, pk: int) -> HttpResponse:
    draft = _draft(pk)
    return render(request, "benchmarks/workbench.html", _editor_context(draft))


@perm_required(LAUNCH_RUNS)
def workbench_search(request: SignedInHttpRequest, pk: int) -> HttpResponse:
    draft = _draft(pk)
    search = _search_context(draft, request.GET)
    if request.htmx:
        return render(request, "benchmarks/workbench.html#search", {"draft": draft, "search": search,
                                                                       "editable": not draft.is_frozen})
    return render(request, "benchmarks/workbench.html", _editor_context(draft, search=search))


@perm_required(LAUNCH_RUNS)
def workbench_provision(request: SignedInHttpRequest, pk: int, provision_pk: int) -> HttpResponse:
    draft = _draft(pk)
    doc = _as_dict(draft.document)
    provision = selectors.workbench_provision(corpus=str(doc.get("corpus", "")), pk=provision_pk)
    if provision is None:
        raise Http404("no such provision in the draft corpus's current snapshots")
    search = _search_context(draft, request.GET)
    if request.htmx:
        return render(request, "benchmarks/workbench.html#reading", {"reading": provision})
    return render(request, "benchmarks/workbench.html", _editor_context(draft, search=search, reading=provision))


def _int(params: Any, name: str) -> int:
    value = params.get(name, "")
    if not value.isdigit():
        raise workbench.DraftEditError("request", name, f"must be a whole number, got {value!r}")
    return int(value)


def _query_fields(p: Any) -> workbench.QueryFields:
    return workbench.QueryFields(id=p.get("id", ""), kind=p.get("kind", ""), split=p.get("split", ""),
                                 family=p.get("family", ""), text=p.get("text", ""),
                                 expected_citation=p.get("expected_citation", ""))


def _family_fields(p: Any) -> workbench.FamilyFields:
    return workbench.FamilyFields(id=p.get("id", ""), split=p.get("split", ""), description=p.get("description", ""))


# action -> (builds the document edit from the POST, whether the edit concerns one query's card)
EDITS: dict[str, tuple[Callable[[Any], Callable[[dict[str, Any]], None]], bool]] = {
    "header": (lambda p: lambda doc: workbench.header_set(
        doc, name=p.get("name", ""), version=p.get("version", ""), corpus=p.get("corpus", ""),
        description=p.get("description", ""), nominated_by=p.get("nominated_by", ""),
        synthetic=p.get("synthetic", "")), False),
    "family-add": (lambda p: lambda doc: workbench.family_add(doc, _family_fields(p)), False),
    "family-save": (lambda p: lambda doc: workbench.family_save(
        doc, index=_int(p, "index"), expect=p.get("expect", ""), fields=_family_fields(p)), False),
    "family-remove": (lambda p: lambda doc: workbench.family_remove(
        doc, index=_int(p, "index"), expect=p.get("expect", "")), False),
    "query-add": (lambda p: lambda doc: workbench.query_add(doc, qid=p.get("id", ""), kind=p.get("kind", "")),
                  False),
    "query-remove": (lambda p: lambda doc: workbench.query_remove(
        doc, index=_int(p, "index"), expect=p.get("expect", "")), False),
    "query-save": (lambda p: lambda doc: workbench.query_save(
        doc, index=_int(p, "index"), expect=p.get("expect", ""), fields=_query_fields(p)), True),
    "target-add": (lambda p: lambda doc: workbench.target_add(
        doc, index=_int(p, "index"), expect=p.get("expect", ""), citation=p.get("citation", ""),
        note=p.get("note", "")), True),
    "target-remove": (lambda p: lambda doc: workbench.target_remove(
        doc, index=_int(p, "index"), expect=p.get("expect", ""), position=_int(p, "position"),
        citation=p.get("citation", "")), True),
}


def _refused(request: SignedInHttpRequest, draft: SuiteDraft, message: str) -> HttpResponse:
    """A frozen draft is read-only: the page, read-only, with why (409 Conflict)."""
    context = _editor_context(draft)
    context["refusal"] = message
    return render(request, "benchmarks/workbench.html", context, status=409)


@perm_required(LAUNCH_RUNS)
@require_POST
def workbench_edit(request: SignedInHttpRequest, pk: int) -> HttpResponse:
    draft = _draft(pk)
    p = request.POST
    action = p.get("action", "")
    if action not in EDITS:
        return _refused(request, draft, f"action: unknown edit {action!r}; expected one of {', '.join(EDITS)}")
    build, one_query = EDITS[action]
    error = ""
    try:
        draft = services.suite_draft_edit(draft=draft, edit=build(p))
    except services.DraftRefused as exc:
        return _refused(request, draft, str(exc))
    except workbench.DraftEditError as exc:
        error = str(exc)
        draft.refresh_from_db()
    if not request.htmx:
        if error:
            messages.error(request, error)
        anchor = f"#q-{p.get('index')}" if one_query and p.get("index", "").isdigit() else ""
        return redirect(reverse("benchmarks:workbench-draft", args=[draft.pk]) + anchor)
    context = _editor_context(draft)
    index = p.get("index", "")
    if one_query and index.isdigit() and int(index) < len(context["cards"]):
        card = context["cards"][int(index)]
        card.error = error
        context["card"] = card
        if "q" in p:  # nominated from the search panel: show the result as nominated there too
            context["search"] = _search_context(draft, p)
        return render(request, "benchmarks/workbench.html#query_response", context)
    context["error"] = error
    return render(request, "benchmarks/workbench.html#editor", context)


@perm_required(LAUNCH_RUNS)
@require_POST
def workbench_freeze(request: SignedInHttpRequest, pk: int) -> HttpResponse:
    draft = _draft(pk)
    try:
        suite = services.suite_draft_freeze(draft=draft, user=request.user)
    except services.DraftRefused as exc:
        return _refused(request, draft, str(exc))
    except SuiteInvalid as exc:
        context = _editor_context(draft)
        context["error"] = (f"Not frozen: {len(exc.problems)} problem{'s' if len(exc.problems) != 1 else ''} "
                            "(listed below) must be fixed first.")
        return render(request, "benchmarks/workbench.html", context, status=400)
    messages.success(request, f"Draft #{draft.pk} is frozen as {suite}, sha256 {suite.sha256}.")
    for warning in workbench.split_unit_warnings(draft.document if isinstance(draft.document, dict) else {}):
        messages.warning(request, warning)
    return redirect("benchmarks:suite", pk=suite.pk)


# --------------------------------------------------------------------------- confirming targets (lawyers)


@perm_required(GRADE)
@require_POST
def confirmation_propose(request: SignedInHttpRequest, item_id: str) -> HttpResponse:
    """A lawyer proposes a missing target for the query of a confirmation item they are assigned (404 otherwise)."""
    try:
        proposal = confirmation.target_propose(reviewer=request.user, item_id=item_id,
                                               citation=request.POST.get("citation", ""))
    except NotAssigned:
        raise Http404("no such item in your queue") from None
    except confirmation.ConfirmationError as exc:
        messages.error(request, f"Nothing was recorded: {exc}")
    else:
        messages.success(request, f"Your proposal of {proposal.citation} is recorded: other lawyers will be asked "
                                  "to confirm it.")
    return redirect("review:item", item_id)


@perm_required(MANAGE_REVIEWS)
@require_POST
def confirmation_declare(request: SignedInHttpRequest, pk: int) -> HttpResponse:
    """Send the suite's provisional targets (and lawyers' proposals) to the chosen lawyers, blind."""
    suite = get_object_or_404(Suite, pk=pk)
    wanted = set(request.POST.getlist("reviewers"))
    reviewers = [u for u in confirmation.confirmation_reviewers() if str(u.pk) in wanted]
    try:
        per_item = int(request.POST.get("reviewers_per_item") or confirmation.DEFAULT_REVIEWERS)
        pools = confirmation.confirmation_pool_declare(suite=suite, reviewers=reviewers, reviewers_per_item=per_item,
                                                       created_by=request.user)
    except ValueError as exc:  # ConfirmationError, or a number that is not one
        messages.error(request, f"Not declared: {exc}")
    else:
        items = sum(len(pool_item_keys(pool=pool)) for pool in pools)
        messages.success(request, f"{items} items in {len(pools)} new confirmation pools" if pools
                         else "Nothing new to confirm: every target and proposal is in a pool already.")
    return redirect(reverse("benchmarks:suite", args=[suite.pk]) + "#confirmation")


@perm_required(MANAGE_REVIEWS)
@require_POST
def confirmation_new_version(request: SignedInHttpRequest, pk: int) -> HttpResponse:
    """Freeze the next version of the suite with the targets lawyers confirmed (and without those they rejected)."""
    suite = get_object_or_404(Suite, pk=pk)
    try:
        new, created = confirmation.suite_confirmed_version(suite=suite, user=request.user)
    except confirmation.ConfirmationError as exc:
        messages.error(request, f"No new version: {exc}")
        return redirect(reverse("benchmarks:suite", args=[suite.pk]) + "#confirmation")
    except SuiteInvalid as exc:
        messages.error(request, f"No new version: {exc}")
        return redirect(reverse("benchmarks:suite", args=[suite.pk]) + "#confirmation")
    messages.success(request, f"{new} frozen with the confirmations, sha256 {new.sha256}." if created
                     else f"{new} already holds these confirmations.")
    return redirect("benchmarks:suite", pk=new.pk)
