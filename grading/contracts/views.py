"""The firm's contracts under /cuad/contracts/: sets, uploads, the taxonomy, and one contract read in windows.

Readers (stakeholders, admins) see the sets and texts; creating a set, uploading and publishing a taxonomy
need the admin's MANAGE_REVIEWS (the gold labels these contracts are for are review work).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from grading.contracts.extract import KIND_NAMES
from grading.contracts.gold.selectors import gold_sets
from grading.contracts.models import ContractSet, SetContract
from grading.contracts.selectors import contract_search, contract_sets, contract_window, set_contracts, set_figures
from grading.contracts.services import (
    ExclusionError,
    ImportOutcome,
    TaxonomyError,
    contract_exclude,
    contract_labelling_pools,
    contract_set_get_or_create,
    contracts_import,
    cuad_categories,
    taxonomy_current,
    taxonomy_publish,
)
from grading.responses import csv_response, export_format, json_response
from reviewapp.core.auth.roles import MANAGE_REVIEWS, VIEW_REPORTS, perm_required

TEMPLATE_SETS = "cuad/contracts/sets.html"
TEMPLATE_SET = "cuad/contracts/set.html"
TEMPLATE_TAXONOMY = "cuad/contracts/taxonomy.html"
TEMPLATE_CONTRACT = "cuad/contracts/contract.html"
EXTRA_TAXONOMY_ROWS = 3


def _require(request: HttpRequest, perm: str) -> None:
    if not request.user.has_perm(perm):
        raise PermissionDenied


def contract_row(member: SetContract) -> dict:
    text = member.text
    exclusion = getattr(member, "exclusion", None)
    return {"id": member.pk, "title": member.title, "filename": member.filename, "kind": text.kind,
            "units": text.units, "characters": text.length, "text_sha256": text.sha256,
            "source_sha256": member.source_sha256, "source_bytes": member.source_bytes,
            "imported_by": member.imported_by, "imported_at": member.imported_at.isoformat(),
            "excluded_reason": exclusion.reason if exclusion else "",
            "excluded_by": exclusion.excluded_by if exclusion else "",
            "excluded_at": exclusion.excluded_at.isoformat() if exclusion else ""}


@perm_required(VIEW_REPORTS)
def sets_page(request: HttpRequest, fmt: str = "") -> HttpResponse:
    errors: list[str] = []
    if request.method == "POST":
        _require(request, MANAGE_REVIEWS)
        try:
            contract_set, _ = contract_set_get_or_create(name=request.POST.get("name", ""), user=request.user,
                                                         description=request.POST.get("description", "")[:2000])
            return redirect("cuad:contract-set", pk=contract_set.pk)
        except ValueError as exc:
            errors.append(str(exc))
    sets = list(contract_sets())
    fmt = export_format(fmt)
    rows = [{"id": s.pk, "name": s.name, "contracts": s.n_contracts, "excluded": s.n_excluded,
             "created_at": s.created_at.isoformat()} for s in sets]
    if fmt == "json":
        return json_response({"contract_sets": rows})
    if fmt == "csv":
        return csv_response("contract-sets", ["id", "name", "contracts", "excluded", "created_at"], rows)
    return render(request, TEMPLATE_SETS, {"tab": "contracts", "sets": sets, "errors": errors,
                                           "can_manage": request.user.has_perm(MANAGE_REVIEWS)},
                  status=400 if errors else 200)


@perm_required(VIEW_REPORTS)
def set_page(request: HttpRequest, pk: int, fmt: str = "") -> HttpResponse:
    contract_set = get_object_or_404(ContractSet, pk=pk)
    outcomes: list[ImportOutcome] = []
    status = 200
    if request.method == "POST":
        _require(request, MANAGE_REVIEWS)
        uploads = request.FILES.getlist("files")
        if not uploads:
            status = 400
        else:
            outcomes = contracts_import(contract_set=contract_set, user=request.user,
                                        files=[(f.name or "", f.read()) for f in uploads])
            status = 200 if any(o.status != "refused" for o in outcomes) else 400
    members = list(set_contracts(contract_set=contract_set))
    rows = [contract_row(m) for m in members]
    figures = set_figures(contract_set=contract_set)
    taxonomy = taxonomy_current(contract_set)
    fmt = export_format(fmt)
    if fmt == "json":
        return json_response({
            "contract_set": {"id": contract_set.pk, "name": contract_set.name, "contracts": figures.n_contracts,
                             "excluded": figures.n_excluded},
            "taxonomy": None if taxonomy is None else {"version": taxonomy.version, "sha256": taxonomy.sha256,
                                                       "categories": taxonomy.categories},
            "contracts": rows,
        })
    if fmt == "csv":
        return csv_response(f"contract-set-{contract_set.pk}", list(rows[0]) if rows else ["id"], rows)
    return render(request, TEMPLATE_SET, {
        "tab": "contracts", "contract_set": contract_set, "figures": figures, "taxonomy": taxonomy,
        "members": [m for m in members if not hasattr(m, "exclusion")],
        "excluded": [m for m in members if hasattr(m, "exclusion")],
        "outcomes": outcomes, "posted": request.method == "POST", "kind_names": KIND_NAMES,
        "can_manage": request.user.has_perm(MANAGE_REVIEWS), "gold_sets": list(gold_sets(contract_set=contract_set)),
    }, status=status)


@perm_required(VIEW_REPORTS)
def taxonomy_page(request: HttpRequest, pk: int) -> HttpResponse:
    contract_set = get_object_or_404(ContractSet, pk=pk)
    errors: list[str] = []
    current = taxonomy_current(contract_set)
    cuad = cuad_categories()
    if request.method == "POST":
        _require(request, MANAGE_REVIEWS)
        rows = []
        for index in range(int(request.POST.get("rows", "0") or 0)):
            if request.POST.get(f"include-{index}") != "on":
                continue
            rows.append({"name": request.POST.get(f"name-{index}", ""),
                         "description": request.POST.get(f"description-{index}", ""),
                         "cuad_name": request.POST.get(f"cuad-{index}", "")})
        try:
            taxonomy = taxonomy_publish(contract_set=contract_set, categories=rows,
                                        user_name=request.user.get_username(),
                                        note=request.POST.get("note", ""))
            return redirect(f"/cuad/contracts/{contract_set.pk}/?taxonomy={taxonomy.version}")
        except TaxonomyError as exc:
            errors.append(str(exc))
    # The form: the current version's rows, then CUAD's categories it leaves out (unticked), then blank rows.
    form_rows: list[dict[str, str | bool]] = []
    in_use = set()
    for category in (current.categories if current else []):
        origin = category["origin"]
        cuad_name = category["name"] if origin == "cuad" else origin.partition(":")[2] if origin.startswith(
            "cuad:") else ""
        in_use.add(cuad_name)
        form_rows.append({"include": True, "name": category["name"], "description": category["description"],
                          "cuad_name": cuad_name})
    form_rows += [{"include": False, "name": c["name"], "description": c["description"], "cuad_name": c["name"]}
                  for c in cuad if c["name"] not in in_use]
    form_rows += [{"include": False, "name": "", "description": "", "cuad_name": ""}] * EXTRA_TAXONOMY_ROWS
    return render(request, TEMPLATE_TAXONOMY, {
        "tab": "contracts", "contract_set": contract_set, "current": current, "rows": form_rows, "errors": errors,
        "can_manage": request.user.has_perm(MANAGE_REVIEWS),
    }, status=400 if errors else 200)


@perm_required(VIEW_REPORTS)
def contract_page(request: HttpRequest, pk: int, contract_pk: int, fmt: str = "") -> HttpResponse:
    member = get_object_or_404(SetContract.objects.select_related("text", "contract_set", "exclusion"),
                               pk=contract_pk, contract_set_id=pk)
    errors: list[str] = []
    if request.method == "POST":
        _require(request, MANAGE_REVIEWS)
        try:
            contract_exclude(member=member, reason=request.POST.get("reason", ""), user=request.user)
            return redirect(f"/cuad/contracts/{member.contract_set_id}/#excluded")
        except ExclusionError as exc:
            errors.append(str(exc))
    query = request.GET.get("q", "")[:200]
    try:
        start = max(1, int(request.GET.get("start", "1") or 1))
    except ValueError:
        start = 1
    window = contract_window(member=member, start=start)
    hits, total = contract_search(member=member, query=query) if query.strip() else ([], 0)
    fmt = export_format(fmt)
    if fmt == "json":
        return json_response({**contract_row(member), "window": {
            "unit": window.unit_name, "first": window.first, "last": window.last,
            "units": [{"number": u.number, "text": u.text} for u in window.units]},
            "search": {"query": query, "total": total,
                       "hits": [{"unit": h.unit, "offset": h.offset} for h in hits]}})
    if fmt == "csv":
        return csv_response(f"contract-{member.pk}-window", ["number", "text"],
                            [{"number": u.number, "text": u.text} for u in window.units])
    can_manage = request.user.has_perm(MANAGE_REVIEWS)
    return render(request, TEMPLATE_CONTRACT, {
        "tab": "contracts", "member": member, "contract_set": member.contract_set, "window": window,
        "query": query, "hits": hits, "total": total, "kind_name": KIND_NAMES.get(member.text.kind, ""),
        "exclusion": getattr(member, "exclusion", None), "errors": errors, "can_manage": can_manage,
        "pools": contract_labelling_pools(member=member) if can_manage else [],
    }, status=400 if errors else 200)
