"""Admin pages of a pool's judgments read together (/review/agreement/<pool id>/): adjudicating a disagreement,
the walk to the next one, and the exports (qrels, judgments as JSON lines).

Thin: parse, call a service or selector, render.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from reviewapp.core.auth.roles import MANAGE_REVIEWS, perm_required
from reviewapp.core.exports.downloads import download, stream_download
from reviewapp.core.http.requests import SignedInHttpRequest
from reviewapp.review.agreement.disagreements import (
    RulingChanged,
    adjudication_record_seen,
    disagreement_next,
    pool_open_disagreements,
)
from reviewapp.review.agreement.exports import pool_jsonl, pool_qrels
from reviewapp.review.agreement.selectors import pool_adjudication_item
from reviewapp.review.errors import ReviewError
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.pools.views import pool_or_404


@perm_required(MANAGE_REVIEWS)
@require_http_methods(["GET", "POST"])
def admin_adjudicate(request: SignedInHttpRequest, pool_id: str, item_id: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    try:
        view = pool_adjudication_item(pool=pool, item_id=item_id)
    except ObjectDoesNotExist:
        raise Http404("no such item in this pool") from None
    error = ""
    conflict = False
    if request.method == "POST":
        item_row = ReviewItem.objects.select_related("pool").get(pool=pool, public_id=item_id)
        try:
            values = {grade_type: request.POST[grade_type] for grade_type in view.kind.grade_type_keys
                      if request.POST.get(grade_type, "")}
            if not values:
                raise ReviewError("choose a grade (or unknown) for at least one grade type")
            adjudication_record_seen(item=item_row, values=values, adjudicator=request.user,
                                     note=request.POST.get("note", ""),
                                     seen=request.POST.get("seen", ""))
        except RulingChanged as exc:
            error, conflict = str(exc), True
            view = pool_adjudication_item(pool=pool, item_id=item_id)  # as it is now
        except ReviewError as exc:
            error = str(exc)
        else:
            messages.success(request, "Adjudication recorded.")
            if request.POST.get("then") == "next":
                return redirect(reverse("review:disagreement-next", kwargs={"pool_id": pool.public_id})
                                + f"?after={item_id}")
            return redirect(reverse("review:pool", kwargs={"pool_id": pool.public_id}) + "#disagreements")
    walk = disagreement_next(pool=pool, after=item_id)
    return render(request, "review/admin/adjudicate.html",
                  {"pool": pool, "view": view, "error": error, "walk": walk,
                   "open_here": item_id in pool_open_disagreements(pool=pool)},
                  status=(409 if conflict else 400) if error else 200)


@perm_required(MANAGE_REVIEWS)
def admin_qrels(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    grade_type = request.GET.get("grade_type") or None
    try:
        body = pool_qrels(pool=pool, grade_type=grade_type)
    except ValueError as error:
        return HttpResponse(str(error), status=400, content_type="text/plain; charset=utf-8")
    return download(body, filename=f"pool-{pool.public_id}-{grade_type or 'labels'}.qrels")


@perm_required(MANAGE_REVIEWS)
def admin_jsonl(request: HttpRequest, pool_id: str) -> StreamingHttpResponse:
    pool = pool_or_404(pool_id)
    lines = pool_jsonl(
        pool=pool,
        pseudonymise=request.GET.get("pseudonymise") in ("1", "true", "on"),
        include_drafts=request.GET.get("drafts") in ("1", "true", "on"),
    )
    return stream_download(lines, filename=f"pool-{pool.public_id}-judgments.jsonl")


@perm_required(MANAGE_REVIEWS)
@require_GET
def admin_disagreement_next(request: HttpRequest, pool_id: str) -> HttpResponse:
    """Go to the next item with an unruled disagreement (after ``?after=<item id>``), or back to the pool."""
    pool = pool_or_404(pool_id)
    step = disagreement_next(pool=pool, after=request.GET.get("after") or None)
    if step.item_id is None:
        messages.success(request, "No open disagreements left in this pool.")
        return redirect(reverse("review:pool", kwargs={"pool_id": pool.public_id}) + "#disagreements")
    return redirect(reverse("review:adjudicate", kwargs={"pool_id": pool.public_id, "item_id": step.item_id}))
