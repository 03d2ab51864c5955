"""Gold labels of a contract set under /cuad/contracts/<set>/gold/: agreement, adjudication, freeze, versions.

Readers see agreement and the frozen versions and download them; adjudicating and freezing need MANAGE_REVIEWS
(the admin who runs the review), as on the engine's adjudication page.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from grading.contracts.gold.adjudication import RulingError, clause_adjudication, clause_ruling_record, ruling_spans
from grading.contracts.gold.exports import GoldExportError, gold_csv, gold_cuad_json
from grading.contracts.gold.freeze import GoldSetError, gold_set_freeze
from grading.contracts.gold.models import GoldSet
from grading.contracts.gold.provenance import gold_provenance_json, gold_set_entries, gold_set_origin
from grading.contracts.gold.selectors import GoldSetMissing, gold_set_get, gold_sets, labelling_state
from grading.contracts.labelling import LabellingError, clause_labelling_start
from grading.contracts.models import ContractSet
from grading.contracts.selectors import set_figures
from grading.contracts.services import taxonomy_current
from grading.dataset.selectors import dataset_of_gold_set
from reviewapp.core.auth.roles import MANAGE_REVIEWS, VIEW_REPORTS, perm_required
from reviewapp.core.exports.downloads import download
from reviewapp.core.records.provenance import Procedure, provenance_sentences
from reviewapp.review.assignment.selectors import reviewer_candidates
from reviewapp.review.pools.selectors import pool_get, pool_item_keys

TEMPLATE_GOLD = "cuad/contracts/gold.html"
TEMPLATE_GOLD_SET = "cuad/contracts/gold_set.html"
TEMPLATE_ADJUDICATE = "cuad/contracts/gold_adjudicate.html"


@perm_required(VIEW_REPORTS)
def gold_page(request: HttpRequest, pk: int) -> HttpResponse:
    contract_set = get_object_or_404(ContractSet, pk=pk)
    can_manage = request.user.has_perm(MANAGE_REVIEWS)
    taxonomy = taxonomy_current(contract_set)
    return render(request, TEMPLATE_GOLD, {
        "tab": "contracts", "contract_set": contract_set, "pools": labelling_state(contract_set=contract_set),
        "versions": list(gold_sets(contract_set=contract_set)), "figures": set_figures(contract_set=contract_set),
        "can_manage": can_manage,
        # The "start labelling" form: the taxonomy's categories and the people who may be assigned blind review.
        "categories": taxonomy.categories if taxonomy is not None and can_manage else [],
        "candidates": reviewer_candidates() if can_manage else [],
    })


@perm_required(MANAGE_REVIEWS)
@require_POST
def gold_labelling_start(request: HttpRequest, pk: int) -> HttpResponse:
    """Declare a clause pool on the chosen categories and assign the chosen lawyers (``clause_labelling_start``)."""
    contract_set = get_object_or_404(ContractSet, pk=pk)
    wanted = set(request.POST.getlist("reviewers"))
    lawyers = [user for user in reviewer_candidates() if str(user.pk) in wanted]
    try:
        per_item = int(request.POST.get("per_item") or 2)
        pool, added = clause_labelling_start(
            contract_set=contract_set, categories=request.POST.getlist("categories"), reviewers=lawyers,
            per_item=per_item, name=request.POST.get("name", ""), created_by=request.user)
    except ValueError as error:  # LabellingError, or a per_item that is not a number
        messages.error(request, str(error) if isinstance(error, LabellingError) else
                       "lawyers per contract: a whole number")
    else:
        messages.success(request, f"Labelling started: pool {pool.name!r}, {len(pool_item_keys(pool=pool))} items, "
                                  f"{added} assignments to {len(lawyers)} lawyers.")
    return redirect("cuad:contract-gold", pk=pk)


@perm_required(MANAGE_REVIEWS)
@require_POST
def gold_freeze(request: HttpRequest, pk: int) -> HttpResponse:
    contract_set = get_object_or_404(ContractSet, pk=pk)
    try:
        result = gold_set_freeze(contract_set=contract_set, user=request.user)
    except GoldSetError as error:
        messages.error(request, str(error))
        return redirect("cuad:contract-gold", pk=pk)
    gold = result.gold_set
    messages.success(request, f"Froze gold set version {gold.version}." if result.created else
                     f"Nothing changed since version {gold.version}: that version holds this content.")
    return redirect("cuad:contract-gold-set", pk=pk, version=gold.version)


def _gold_or_404(contract_set: ContractSet, version: int) -> GoldSet:
    try:
        return gold_set_get(contract_set=contract_set, version=version)
    except GoldSetMissing as error:
        raise Http404(str(error)) from None


@perm_required(VIEW_REPORTS)
def gold_set_page(request: HttpRequest, pk: int, version: int) -> HttpResponse:
    contract_set = get_object_or_404(ContractSet, pk=pk)
    gold = _gold_or_404(contract_set, version)
    entries = gold_set_entries(gold)
    contracts = [
        {"title": c["title"], "text_sha256": c["text_sha256"],
         "lawyers": [p["username"] for p in gold.provenance.get(c["title"], {}).get("labelled_by", [])],
         "adjudicated": [e["category"] for e in entries
                         if e["title"] == c["title"] and e["procedure"] == Procedure.ADJUDICATED],
         "admin_own": [e["category"] for e in entries
                       if e["title"] == c["title"] and e["procedure"] == Procedure.ADMIN_OWN],
         "present": sum(1 for a in c["answers"].values() if a["present"]),
         "spans": sum(len(a["spans"]) for a in c["answers"].values())}
        for c in gold.content["contracts"]
    ]
    return render(request, TEMPLATE_GOLD_SET, {
        "tab": "contracts", "contract_set": contract_set, "gold": gold, "contracts": contracts,
        "provenance": provenance_sentences([gold_set_origin(gold)]),
        "dataset": dataset_of_gold_set(contract_set_id=contract_set.pk, version=gold.version),
    })


@perm_required(VIEW_REPORTS)
def gold_set_download(request: HttpRequest, pk: int, version: int, fmt: str) -> HttpResponse:
    contract_set = get_object_or_404(ContractSet, pk=pk)
    gold = _gold_or_404(contract_set, version)
    try:
        body = {"csv": gold_csv, "json": gold_cuad_json, "provenance": gold_provenance_json}[fmt](gold)
    except GoldExportError as error:
        return HttpResponse(str(error), status=409, content_type="text/plain; charset=utf-8")
    suffix = {"csv": ".csv", "json": ".json", "provenance": ".provenance.json"}[fmt]
    return download(body, filename=f"gold-set-{contract_set.pk}-v{gold.version}{suffix}")


@perm_required(MANAGE_REVIEWS)
@require_http_methods(["GET", "POST"])
def gold_adjudicate(request: HttpRequest, pk: int, pool_id: str, item_id: str) -> HttpResponse:
    contract_set = get_object_or_404(ContractSet, pk=pk)
    try:
        pool = pool_get(public_id=pool_id)
        if pool.external_ref.get("contract_set") != contract_set.pk:
            raise LookupError(pool_id)
        view = clause_adjudication(pool=pool, item_id=item_id)
    except (LookupError, ObjectDoesNotExist):
        raise Http404("no such clause item in this set") from None
    error_text = ""
    if request.method == "POST":
        try:
            presence, spans = ruling_spans(view=view, choice=request.POST.get("ruling", ""),
                                           offsets=request.POST.get("offsets", ""))
            clause_ruling_record(pool=pool, item_id=item_id, presence=presence, spans=spans, adjudicator=request.user,
                                 note=request.POST.get("note", "")[:2000])
        except RulingError as error:
            error_text = str(error)
        else:
            messages.success(request, "Ruling recorded.")
            return redirect("cuad:contract-gold", pk=pk)
    return render(request, TEMPLATE_ADJUDICATE, {"tab": "contracts", "contract_set": contract_set, "pool": pool,
                                                 "view": view, "error": error_text},
                  status=400 if error_text else 200)
