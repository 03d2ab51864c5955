"""Admin actions on who holds a pool's items (/review/assignment/<pool id>/): assign, unassign, reassign, and
mixing known-answer items into reviewers' queues.

Thin: parse, call a service, send the admin back to the pool's page.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from reviewapp.core.auth.roles import MANAGE_REVIEWS, perm_required
from reviewapp.core.http.requests import SignedInHttpRequest
from reviewapp.review.assignment.selectors import reviewer_candidates
from reviewapp.review.assignment.services import (
    assignment_reassign,
    assignment_unassign,
    known_answer_mix,
    pool_assign_detail,
)
from reviewapp.review.errors import ReviewError
from reviewapp.review.pools.known_answers import KnownAnswerError
from reviewapp.review.pools.views import known_answers_page, pool_or_404


def user_or_404(value: Any) -> Any:
    """The user whose id ``value`` is (a URL or form value), else 404: shared by every admin view on reviewers."""
    try:
        pk = int(value or "")
    except (TypeError, ValueError):
        raise Http404("no such reviewer") from None
    user = get_user_model().objects.filter(pk=pk).first()
    if user is None:
        raise Http404("no such reviewer")
    return user


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_pool_assign(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    wanted = set(request.POST.getlist("reviewers"))
    reviewers = [user for user in reviewer_candidates() if str(user.pk) in wanted]
    try:
        result = pool_assign_detail(pool=pool, reviewers=reviewers, per_item=int(request.POST.get("per_item") or
                                                                                 pool.reviewers_per_item))
    except (ReviewError, ValueError) as error:
        messages.error(request, str(error))
    else:
        added = result.assigned
        messages.success(request, f"{added} assignment{'s' if added != 1 else ''} added; {result.reused} reused from "
                                  f"the same reviewers' judgments of the same texts in other pools "
                                  f"({result.reused_complete} complete already).")
    return redirect("review:pool", pool_id=pool.public_id)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_pool_unassign(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    user = user_or_404(request.POST.get("reviewer"))
    result = assignment_unassign(pool=pool, reviewer=user)
    messages.success(request, f"{user.get_username()}: {result.removed} open assignment(s) removed; "
                     f"{result.kept_judged} with a judgment kept.")
    return redirect("review:pool", pool_id=pool.public_id)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_pool_reassign(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    source = user_or_404(request.POST.get("from_reviewer"))
    target = user_or_404(request.POST.get("to_reviewer"))
    try:
        result = assignment_reassign(pool=pool, from_reviewer=source, to_reviewer=target)
    except ReviewError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"{result.moved} open item(s) moved from {source.get_username()} to "
                         f"{target.get_username()} ({result.already_held} they held already; {result.kept_judged} "
                         "judged kept).")
    return redirect("review:pool", pool_id=pool.public_id)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_known_answer_mix(request: SignedInHttpRequest, pool_id: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    raw = request.POST.get("share", "")
    try:
        try:
            share = float(raw) / 100
        except ValueError:
            raise KnownAnswerError(f"share: {raw!r} is not a percentage") from None
        mixed = known_answer_mix(pool=pool, share=share)
    except KnownAnswerError as exc:
        # The known-answer page again, the error above the form it came from.
        return known_answers_page(request, pool, error=str(exc))
    messages.success(request, f"{mixed.added} known-answer assignment(s) added across {mixed.reviewers} "
                              f"reviewer(s) ({mixed.known_items} known-answer item(s) in this pool).")
    return redirect("review:pool-known-answers", pool_id=pool.public_id)
