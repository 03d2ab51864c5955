"""Admin pages of pools (/review/pools/): the list, declaring one, a pool's page, a new version, its guidelines
and its known-answer items.

Thin: parse, call a service or selector, render.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from reviewapp.core.auth.roles import MANAGE_REVIEWS, perm_required
from reviewapp.core.http.requests import SignedInHttpRequest
from reviewapp.review.errors import ReviewError
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.kinds import kind_get, kinds_all
from reviewapp.review.pools.guidelines import (
    MAX_GUIDELINES_CHARS,
    GuidelinesError,
    guidelines_publish,
    pool_guidelines_history,
)
from reviewapp.review.pools.known_answers import (
    KnownAnswerError,
    known_answer_set,
    known_answer_withdraw,
    pool_known_answers,
    reviewer_accuracy,
)
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.pools.panels import item_rulings, known_answer_panels, pool_list_panels, pool_page_panels
from reviewapp.review.pools.selectors import pool_assignees, pool_list, pool_model_get
from reviewapp.review.pools.services import json_lines_parse, pool_create_model, pool_new_version


def pool_or_404(pool_id: str) -> ReviewPool:
    try:
        return pool_model_get(public_id=pool_id)
    except ObjectDoesNotExist:
        raise Http404("no such pool") from None


@perm_required(MANAGE_REVIEWS)
def admin_pools(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "review/admin/pools.html",
        {"pools": pool_list(), "kinds": kinds_all(), **pool_list_panels()},
    )


@perm_required(MANAGE_REVIEWS)
@require_http_methods(["GET", "POST"])
def admin_pool_new(request: SignedInHttpRequest) -> HttpResponse:
    form = {"kind": next(iter(kinds_all()), ""), "reviewers_per_item": "2"}
    if request.method == "POST":
        form = request.POST.dict()
        try:
            items = json_lines_parse(form.get("items", ""))
            pool = pool_create_model(
                name=form.get("name", ""),
                kind=form.get("kind", ""),
                items=items,
                declared_rule=form.get("declared_rule", ""),
                reviewers_per_item=int(form.get("reviewers_per_item") or 2),
                reviewer_title=form.get("reviewer_title", ""),
                instructions=form.get("instructions", ""),
                created_by=request.user,
            )
        except (ReviewError, ValueError) as error:
            return render(request, "review/admin/pool_new.html", {"form": form, "error": str(error),
                                                                  "kinds": kinds_all()}, status=400)
        messages.success(request, f"Pool declared with {pool.items.count()} items. Assign reviewers next.")
        return redirect("review:pool", pool_id=pool.public_id)
    return render(request, "review/admin/pool_new.html", {"form": form, "kinds": kinds_all()})


@perm_required(MANAGE_REVIEWS)
def admin_pool(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    kind = kind_get(pool.kind)
    context: dict[str, Any] = {
        "pool": pool,
        "kind": kind,
        "assignees": pool_assignees(pool=pool),
        "judged": pool.is_judged(),
        "accuracy": reviewer_accuracy(pool=pool),
        # A list, not the dict: ``declared_params.items`` in a template looks up the key "items" first, and a
        # pool declared from a rerank run has one (its item count), which made this page a 500.
        "declared_params": sorted((pool.declared_params or {}).items()),
        # Progress, agreement, labels, candidates, reuse counts, imports: read by the nouns above pools.
        **pool_page_panels(pool),
    }
    return render(request, "review/admin/pool_detail.html", context)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_pool_new_version(request: SignedInHttpRequest, pool_id: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    try:
        per_item = int(request.POST.get("reviewers_per_item") or pool.reviewers_per_item)
        new = pool_new_version(pool=pool, reviewers_per_item=per_item, created_by=request.user)
    except ValueError as error:  # ReviewError is a ValueError
        messages.error(request, f"reviewers_per_item: {error}" if not isinstance(error, ReviewError)
                       else str(error))
        return redirect("review:pool", pool_id=pool.public_id)
    messages.success(request, f"New version declared with {new.reviewers_per_item} reviewer(s) per item; "
                     f"the judged pool {pool.public_id} stays as it was. Assign reviewers next.")
    return redirect("review:pool", pool_id=new.public_id)


@perm_required(MANAGE_REVIEWS)
@require_http_methods(["GET", "POST"])
def admin_pool_guidelines(request: SignedInHttpRequest, pool_id: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    error, text = "", None
    if request.method == "POST":
        text = request.POST.get("text", "")
        try:
            published = guidelines_publish(pool=pool, text=text, by=request.user)
        except GuidelinesError as exc:
            error = str(exc)
        else:
            messages.success(request, f"Guidelines version {published.version} is what reviewers see now.")
            return redirect("review:pool-guidelines", pool_id=pool.public_id)
    history = pool_guidelines_history(pool=pool)
    if text is None:
        text = history[0].text if history else pool.instructions
    return render(request, "review/admin/guidelines.html",
                  {"pool": pool, "history": history, "text": text, "error": error,
                   "max_chars": MAX_GUIDELINES_CHARS}, status=400 if error else 200)


def _known_answer_post(request: SignedInHttpRequest, pool: ReviewPool) -> str:
    """Apply one known-answer action; returns the success message (errors raise KnownAnswerError)."""
    action = request.POST.get("action", "")
    item = ReviewItem.objects.filter(pool=pool, public_id=request.POST.get("item", "")).first()
    if item is None:
        raise KnownAnswerError(f"item: {request.POST.get('item', '')!r} is not an item of this pool")
    if action == "set":
        kind = kind_get(pool.kind)
        expected: dict[str, Any] = {key: request.POST.get(key, "") for key in kind.grade_type_keys}
        if not any(expected.values()):
            # No grade typed: take the item's current rulings (an item with an adjudicated answer).
            rulings = item_rulings(pool, item.public_id)
            expected = {key: value for key, value in rulings.items() if isinstance(value, int)}
        count = known_answer_set(item=item, expected=expected, by=request.user)
        return f"Item {item.public_id} is a known-answer item ({count} grade type(s))."
    if action == "withdraw":
        count = known_answer_withdraw(item=item, by=request.user)
        return f"Item {item.public_id} is no longer a known-answer item ({count} grade type(s) withdrawn)."
    raise KnownAnswerError(f"action: {action!r} is not one of set, withdraw, mix")


@perm_required(MANAGE_REVIEWS)
@require_http_methods(["GET", "POST"])
def admin_known_answers(request: SignedInHttpRequest, pool_id: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    error = ""
    if request.method == "POST" and request.POST.get("action") == "mix":
        # Mixing writes assignments, so it moved to assignment's URL; a page still open from before posts here.
        return HttpResponsePermanentRedirect(reverse("review:known-answers-mix", kwargs={"pool_id": pool.public_id}),
                                             preserve_request=True)
    if request.method == "POST":
        try:
            done = _known_answer_post(request, pool)
        except KnownAnswerError as exc:
            error = str(exc)
        else:
            messages.success(request, done)
            return redirect("review:pool-known-answers", pool_id=pool.public_id)
    return known_answers_page(request, pool, error=error)


def known_answers_page(request: HttpRequest, pool: ReviewPool, *, error: str = "") -> HttpResponse:
    """The known-answer page of ``pool``, ``error`` (if any) above the forms with status 400."""
    context = {
        "pool": pool, "kind": kind_get(pool.kind), "known": pool_known_answers(pool=pool), "error": error,
        **known_answer_panels(pool), "accuracy": reviewer_accuracy(pool=pool),
    }
    return render(request, "review/admin/known_answers.html", context, status=400 if error else 200)
