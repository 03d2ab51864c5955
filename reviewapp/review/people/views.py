"""Admin pages for people and reliability, under /review/admin/: workload and reassignment, a reviewer's
account (tokens, invitation, audit), the walk through open disagreements, a pool's guidelines, and
known-answer items with each reviewer's accuracy. Plus the public page where an invited reviewer sets their
own password.

Thin: parse, call a service or selector, render. None of these writes a reviewer's judgment.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import SetPasswordForm
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views import View
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from reviewapp.core.auth import accounts
from reviewapp.core.auth.roles import MANAGE_REVIEWS, perm_required
from reviewapp.core.exports.csv_export import SafeCsvDictWriter
from reviewapp.core.models import AccountAudit, ApiToken
from reviewapp.review import selectors, services
from reviewapp.review.agreement import disagreements
from reviewapp.review.kinds import kind_get
from reviewapp.review.models import ReviewItem, ReviewPool
from reviewapp.review.people import workload
from reviewapp.review.pools import guidelines, known_answers, pool_admin
from reviewapp.sso.sessions import user_session_end, user_sessions_active, user_sign_out_everywhere


def _pool_or_404(pool_id: str) -> ReviewPool:
    try:
        return selectors.pool_get(public_id=pool_id)
    except ObjectDoesNotExist:
        raise Http404("no such pool") from None


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


# --- workload -----------------------------------------------------------------------------------------------


@perm_required(MANAGE_REVIEWS)
@require_GET
def admin_workload(request: HttpRequest) -> HttpResponse:
    """Every reviewer's work per pool, with reassign forms and their accuracy on known-answer items."""
    pool = _pool_or_404(request.GET["pool"]) if request.GET.get("pool") else None
    accuracy = {row.reviewer_id: row for row in known_answers.reviewer_accuracy(pool=pool)}
    context = {
        "rows": workload.reviewer_workload(pool=pool),
        "pool": pool,
        "accuracy": accuracy,
        "candidates": selectors.reviewer_candidates(),
        "break_minutes": int(workload.BREAK.total_seconds() // 60),
        "idle_cap_minutes": round(settings.REVIEW_IDLE_CAP_SECONDS / 60),
    }
    return render(request, "review/admin/workload.html", context)


@perm_required(MANAGE_REVIEWS)
@require_GET
def admin_workload_time_csv(request: HttpRequest) -> HttpResponse:
    """Time spent per reviewer and pool as CSV (billing): the workload page's figures, one row per pair."""
    pool = _pool_or_404(request.GET["pool"]) if request.GET.get("pool") else None
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="review-time.csv"'
    writer = SafeCsvDictWriter(response, fieldnames=workload.TIME_CSV_FIELDS)
    writer.writeheader()
    for row in workload.workload_time_rows(pool=pool):
        writer.writerow(row)
    return response


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_workload_reassign(request: HttpRequest) -> HttpResponse:
    """Move one reviewer's open items of one pool to another reviewer (judged items stay)."""
    pool = _pool_or_404(request.POST.get("pool", ""))
    source = user_or_404(request.POST.get("from_reviewer"))
    target = user_or_404(request.POST.get("to_reviewer"))
    try:
        result = pool_admin.assignment_reassign(pool=pool, from_reviewer=source, to_reviewer=target)
    except services.ReviewError as error:
        messages.error(request, f"{pool.name}: {error}")
    else:
        messages.success(request, f"{pool.name}: {result.moved} open item(s) moved from {source.get_username()} to "
                         f"{target.get_username()} ({result.already_held} they held already; {result.linked} served "
                         f"by their judgment of the same texts elsewhere; {result.kept_judged} judged and "
                         f"{result.kept_repeat} whose texts they hold under other rules kept with "
                         f"{source.get_username()}).")
    back = reverse("review:admin-workload")
    if request.POST.get("filtered"):
        back += "?" + urlencode({"pool": pool.public_id})
    return redirect(back)


# --- a reviewer's account -------------------------------------------------------------------------------------


def _plain_reviewer_or_404(user_id: int) -> Any:
    user = user_or_404(user_id)
    if not accounts.is_plain_reviewer(user):
        raise Http404("not a reviewer account")
    return user


def _reviewer_page(request: HttpRequest, user: Any, *, invitation_url: str = "", status: int = 200) -> HttpResponse:
    context = {
        "reviewer": user,
        "tokens": ApiToken.objects.filter(user=user).order_by("-created_at"),
        # Changes to the account, and to its tokens (named "<prefix>… of <username>" or "… of user #<id>").
        "audit": AccountAudit.objects.filter(
            Q(target_type="user", target_id=str(user.pk))
            | Q(target_type="token", target__endswith=f" of {user.get_username()}")
            | Q(target_type="token", target__endswith=f" of user #{user.pk}"))[:100],
        "workload": [row for row in workload.reviewer_workload() if row.reviewer_id == user.pk],
        "accuracy": [row for row in known_answers.reviewer_accuracy() if row.reviewer_id == user.pk],
        "invitation_url": invitation_url,
        "live_invitations": accounts.reviewer_invitations_live(user=user),
        "sessions": user_sessions_active(user=user),
    }
    response = render(request, "review/admin/reviewer.html", context, status=status)
    if invitation_url:
        response["Cache-Control"] = "no-store"  # the one-time link is on this page
    return response


@perm_required(MANAGE_REVIEWS)
@require_GET
def admin_reviewer(request: HttpRequest, user_id: int) -> HttpResponse:
    return _reviewer_page(request, _plain_reviewer_or_404(user_id))


def invitation_url(request: HttpRequest, invitation: accounts.Invitation) -> str:
    return request.build_absolute_uri(reverse("review:invitation", kwargs={"uidb64": invitation.uidb64,
                                                                           "token": invitation.token}))


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_reviewer_invite(request: HttpRequest, user_id: int) -> HttpResponse:
    """A set-password link for the reviewer, shown once (their current password keeps working until they use it)."""
    user = _plain_reviewer_or_404(user_id)
    try:
        invitation = accounts.reviewer_invitation_make(user=user, by=request.user)
    except accounts.AccountError as error:
        messages.error(request, str(error))
        return redirect("review:admin-reviewer", user_id=user.pk)
    return _reviewer_page(request, user, invitation_url=invitation_url(request, invitation))


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_reviewer_token_revoke(request: HttpRequest, user_id: int, token_id: int) -> HttpResponse:
    user = _plain_reviewer_or_404(user_id)
    if accounts.reviewer_token_revoke(user=user, token_id=token_id, by=request.user):
        messages.success(request, f"Token revoked; {user.get_username()} can make a new one on /accounts/tokens/.")
    else:
        messages.error(request, "token: no such token of this reviewer (already revoked?)")
    return redirect("review:admin-reviewer", user_id=user.pk)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_reviewer_invitation_revoke(request: HttpRequest, user_id: int) -> HttpResponse:
    user = _plain_reviewer_or_404(user_id)
    ended = accounts.reviewer_invitation_revoke(user=user, by=request.user)
    messages.success(request, f"{ended} invitation link(s) revoked." if ended else "No open invitation link.")
    return redirect("review:admin-reviewer", user_id=user.pk)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_reviewer_session_end(request: HttpRequest, user_id: int, session_id: int) -> HttpResponse:
    user = _plain_reviewer_or_404(user_id)
    if user_session_end(user=user, session_id=session_id, by=request.user):
        messages.success(request, f"Session ended; {user.get_username()} must sign in again on that browser.")
    else:
        messages.error(request, "session: no such session of this reviewer (already ended?)")
    return redirect("review:admin-reviewer", user_id=user.pk)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_reviewer_sign_out_everywhere(request: HttpRequest, user_id: int) -> HttpResponse:
    user = _plain_reviewer_or_404(user_id)
    done = user_sign_out_everywhere(user=user, by=request.user)
    messages.success(request, f"{user.get_username()} signed out everywhere: {done.sessions} session(s) ended, "
                              f"{done.tokens} API token(s) revoked.")
    return redirect("review:admin-reviewer", user_id=user.pk)


class InvitationView(View):
    """The invited reviewer sets their own password; the link works once, expires, and can be revoked."""

    template_name = "review/invitation.html"

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        self.invitation = accounts.invitation_find(uidb64=kwargs["uidb64"], token=kwargs["token"])
        return super().dispatch(request, *args, **kwargs)

    def _page(self, form: Any, status: int = 200) -> HttpResponse:
        response = render(self.request, self.template_name, {"validlink": self.invitation is not None, "form": form},
                          status=status)
        response["Referrer-Policy"] = "no-referrer"  # the key is in this page's address
        return response

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        form = SetPasswordForm(self.invitation.user) if self.invitation else None
        return self._page(form)  # a dead link answers with a page saying so

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if self.invitation is None:
            return self._page(None)
        form = SetPasswordForm(self.invitation.user, request.POST)
        if not form.is_valid():
            return self._page(form, status=400)
        try:
            accounts.reviewer_invitation_accept(invitation=self.invitation,
                                                password=form.cleaned_data["new_password1"])
        except accounts.AccountError:
            self.invitation = None
            return self._page(None)
        messages.success(request, "Password set. Sign in with it now.")
        return redirect("login")


reviewer_invitation = InvitationView.as_view()


# --- adjudication: next disagreement ---------------------------------------------------------------------------


@perm_required(MANAGE_REVIEWS)
@require_GET
def admin_disagreement_next(request: HttpRequest, pool_id: str) -> HttpResponse:
    """Go to the next item with an unruled disagreement (after ``?after=<item id>``), or back to the pool."""
    pool = _pool_or_404(pool_id)
    step = disagreements.disagreement_next(pool=pool, after=request.GET.get("after") or None)
    if step.item_id is None:
        messages.success(request, "No open disagreements left in this pool.")
        return redirect(reverse("review:admin-pool", kwargs={"pool_id": pool.public_id}) + "#disagreements")
    return redirect(reverse("review:admin-adjudicate", kwargs={"pool_id": pool.public_id, "item_id": step.item_id}))


# --- guidelines ----------------------------------------------------------------------------------------------


@perm_required(MANAGE_REVIEWS)
@require_http_methods(["GET", "POST"])
def admin_pool_guidelines(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = _pool_or_404(pool_id)
    error, text = "", None
    if request.method == "POST":
        text = request.POST.get("text", "")
        try:
            published = guidelines.guidelines_publish(pool=pool, text=text, by=request.user)
        except guidelines.GuidelinesError as exc:
            error = str(exc)
        else:
            messages.success(request, f"Guidelines version {published.version} is what reviewers see now.")
            return redirect("review:admin-pool-guidelines", pool_id=pool.public_id)
    history = guidelines.pool_guidelines_history(pool=pool)
    if text is None:
        text = history[0].text if history else pool.instructions
    return render(request, "review/admin/guidelines.html",
                  {"pool": pool, "history": history, "text": text, "error": error,
                   "max_chars": guidelines.MAX_GUIDELINES_CHARS}, status=400 if error else 200)


# --- known-answer items ----------------------------------------------------------------------------------------


def _known_answer_post(request: HttpRequest, pool: ReviewPool) -> str:
    """Apply one known-answer action; returns the success message (errors raise KnownAnswerError)."""
    action = request.POST.get("action", "")
    if action == "mix":
        raw = request.POST.get("share", "")
        try:
            share = float(raw) / 100
        except ValueError:
            raise known_answers.KnownAnswerError(f"share: {raw!r} is not a percentage") from None
        mixed = known_answers.known_answer_mix(pool=pool, share=share)
        return (f"{mixed.added} known-answer assignment(s) added across {mixed.reviewers} reviewer(s) "
                f"({mixed.known_items} known-answer item(s) in this pool).")
    item = ReviewItem.objects.filter(pool=pool, public_id=request.POST.get("item", "")).first()
    if item is None:
        raise known_answers.KnownAnswerError(f"item: {request.POST.get('item', '')!r} is not an item of this pool")
    if action == "set":
        kind = kind_get(pool.kind)
        expected = {key: request.POST.get(key, "") for key in kind.grade_type_keys}
        if not any(expected.values()):
            # No grade typed: take the item's current rulings (an item with an adjudicated answer).
            rulings = _pool_rulings(pool, item)
            expected = {key: value for key, value in rulings.items() if isinstance(value, int)}
        count = known_answers.known_answer_set(item=item, expected=expected, by=request.user)
        return f"Item {item.public_id} is a known-answer item ({count} grade type(s))."
    if action == "withdraw":
        count = known_answers.known_answer_withdraw(item=item, by=request.user)
        return f"Item {item.public_id} is no longer a known-answer item ({count} grade type(s) withdrawn)."
    raise known_answers.KnownAnswerError(f"action: {action!r} is not one of set, withdraw, mix")


def _pool_rulings(pool: ReviewPool, item: ReviewItem) -> dict[str, Any]:
    from reviewapp.review.agreement.selectors import pool_adjudication_item

    return pool_adjudication_item(pool=pool, item_id=item.public_id).rulings


@perm_required(MANAGE_REVIEWS)
@require_http_methods(["GET", "POST"])
def admin_known_answers(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = _pool_or_404(pool_id)
    error = ""
    if request.method == "POST":
        try:
            done = _known_answer_post(request, pool)
        except known_answers.KnownAnswerError as exc:
            error = str(exc)
        else:
            messages.success(request, done)
            return redirect("review:admin-known-answers", pool_id=pool.public_id)
    kind = kind_get(pool.kind)
    known = known_answers.pool_known_answers(pool=pool)
    known_ids = {row.item_id for row in known}
    # Candidates: items with a current ruling (an adjudicated answer) not yet used as known answers.
    ruled = [label for label in selectors.pool_labels(pool=pool)
             if label.state == "adjudicated" and isinstance(label.value, int) and label.item_id not in known_ids]
    context = {
        "pool": pool, "kind": kind, "known": known, "ruled": ruled, "error": error,
        "accuracy": known_answers.reviewer_accuracy(pool=pool),
        "default_share": round(known_answers.DEFAULT_SHARE * 100),
        "max_share": round(known_answers.MAX_SHARE * 100),
    }
    return render(request, "review/admin/known_answers.html", context, status=400 if error else 200)
