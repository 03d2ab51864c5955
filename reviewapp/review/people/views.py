"""Admin pages of people (/review/people/): reviewer accounts (create, deactivate, tokens, invitation, sessions,
audit), workload and reassignment, time spent as CSV. Plus the public page where an invited reviewer sets their
own password (/review/people/invitation/...).

Thin: parse, call a service or selector, render. None of these writes a reviewer's judgment.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.forms import SetPasswordForm
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views import View
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from reviewapp.core.auth import accounts
from reviewapp.core.auth.roles import MANAGE_REVIEWS, perm_required
from reviewapp.core.exports.downloads import csv_download
from reviewapp.core.models import AccountAudit, ApiToken
from reviewapp.review.assignment.selectors import reviewer_candidates
from reviewapp.review.assignment.services import assignment_reassign
from reviewapp.review.assignment.views import user_or_404
from reviewapp.review.errors import ReviewError
from reviewapp.review.people.selectors import reviewer_accounts
from reviewapp.review.people.workload import (
    BREAK,
    TIME_CSV_FIELDS,
    reviewer_workload,
    workload_time_rows,
)
from reviewapp.review.pools.known_answers import reviewer_accuracy
from reviewapp.review.pools.views import pool_or_404
from reviewapp.sso.sessions import user_session_end, user_sessions_active, user_sign_out_everywhere

# --- workload -----------------------------------------------------------------------------------------------


@perm_required(MANAGE_REVIEWS)
@require_GET
def admin_workload(request: HttpRequest) -> HttpResponse:
    """Every reviewer's work per pool, with reassign forms and their accuracy on known-answer items."""
    pool = pool_or_404(request.GET["pool"]) if request.GET.get("pool") else None
    accuracy = {row.reviewer_id: row for row in reviewer_accuracy(pool=pool)}
    context = {
        "rows": reviewer_workload(pool=pool),
        "pool": pool,
        "accuracy": accuracy,
        "candidates": reviewer_candidates(),
        "break_minutes": int(BREAK.total_seconds() // 60),
        "idle_cap_minutes": round(settings.REVIEW_IDLE_CAP_SECONDS / 60),
    }
    return render(request, "review/admin/workload.html", context)


@perm_required(MANAGE_REVIEWS)
@require_GET
def admin_workload_time_csv(request: HttpRequest) -> HttpResponse:
    """Time spent per reviewer and pool as CSV (billing): the workload page's figures, one row per pair."""
    pool = pool_or_404(request.GET["pool"]) if request.GET.get("pool") else None
    return csv_download(workload_time_rows(pool=pool), filename="review-time.csv", fields=TIME_CSV_FIELDS)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_workload_reassign(request: HttpRequest) -> HttpResponse:
    """Move one reviewer's open items of one pool to another reviewer (judged items stay)."""
    pool = pool_or_404(request.POST.get("pool", ""))
    source = user_or_404(request.POST.get("from_reviewer"))
    target = user_or_404(request.POST.get("to_reviewer"))
    try:
        result = assignment_reassign(pool=pool, from_reviewer=source, to_reviewer=target)
    except ReviewError as error:
        messages.error(request, f"{pool.name}: {error}")
    else:
        messages.success(request, f"{pool.name}: {result.moved} open item(s) moved from {source.get_username()} to "
                         f"{target.get_username()} ({result.already_held} they held already; {result.linked} served "
                         f"by their judgment of the same texts elsewhere; {result.kept_judged} judged and "
                         f"{result.kept_repeat} whose texts they hold under other rules kept with "
                         f"{source.get_username()}).")
    back = reverse("review:workload")
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
        "workload": [row for row in reviewer_workload() if row.reviewer_id == user.pk],
        "accuracy": [row for row in reviewer_accuracy() if row.reviewer_id == user.pk],
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
        return redirect("review:reviewer", user_id=user.pk)
    return _reviewer_page(request, user, invitation_url=invitation_url(request, invitation))


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_reviewer_token_revoke(request: HttpRequest, user_id: int, token_id: int) -> HttpResponse:
    user = _plain_reviewer_or_404(user_id)
    if accounts.reviewer_token_revoke(user=user, token_id=token_id, by=request.user):
        messages.success(request, f"Token revoked; {user.get_username()} can make a new one on /accounts/tokens/.")
    else:
        messages.error(request, "token: no such token of this reviewer (already revoked?)")
    return redirect("review:reviewer", user_id=user.pk)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_reviewer_invitation_revoke(request: HttpRequest, user_id: int) -> HttpResponse:
    user = _plain_reviewer_or_404(user_id)
    ended = accounts.reviewer_invitation_revoke(user=user, by=request.user)
    messages.success(request, f"{ended} invitation link(s) revoked." if ended else "No open invitation link.")
    return redirect("review:reviewer", user_id=user.pk)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_reviewer_session_end(request: HttpRequest, user_id: int, session_id: int) -> HttpResponse:
    user = _plain_reviewer_or_404(user_id)
    if user_session_end(user=user, session_id=session_id, by=request.user):
        messages.success(request, f"Session ended; {user.get_username()} must sign in again on that browser.")
    else:
        messages.error(request, "session: no such session of this reviewer (already ended?)")
    return redirect("review:reviewer", user_id=user.pk)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_reviewer_sign_out_everywhere(request: HttpRequest, user_id: int) -> HttpResponse:
    user = _plain_reviewer_or_404(user_id)
    done = user_sign_out_everywhere(user=user, by=request.user)
    messages.success(request, f"{user.get_username()} signed out everywhere: {done.sessions} session(s) ended, "
                              f"{done.tokens} API token(s) revoked.")
    return redirect("review:reviewer", user_id=user.pk)


class InvitationView(View):
    """The invited reviewer sets their own password; the link works once, expires, and can be revoked."""

    template_name = "review/invitation.html"

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
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


# --- reviewer accounts: the list, a new account, deactivate and reactivate ------------------------------------------


@perm_required(MANAGE_REVIEWS)
@require_http_methods(["GET", "POST"])
def admin_reviewers(request: HttpRequest) -> HttpResponse:
    """Reviewer accounts: list, create (a random password shown once), deactivate, reactivate."""
    form = {"username": "", "first_name": "", "last_name": "", "email": "", "password_mode": "invite"}
    error = ""
    created = None
    invite_link = ""
    if request.method == "POST":
        form = {key: request.POST.get(key, "") for key in form}
        mode = form["password_mode"] or "random"
        typed = request.POST.get("password", "") if mode == "typed" else ""
        try:
            if mode not in ("invite", "random", "typed"):
                raise accounts.AccountError(f"password_mode: {mode!r} is not one of invite, random, typed")
            if mode == "typed" and not typed:
                raise accounts.AccountError("password: type the initial password, or choose another option")
            created = accounts.reviewer_account_create(
                by=request.user, username=form["username"], first_name=form["first_name"],
                last_name=form["last_name"], email=form["email"], invite=mode == "invite", password=typed)
        except accounts.AccountError as exc:
            error = str(exc)
        except ValidationError as exc:
            error = "password: " + " ".join(exc.messages)
        else:
            if created.invitation is not None:
                invite_link = invitation_url(request, created.invitation)
    context = {"reviewers": reviewer_accounts(), "form": form, "error": error, "created": created,
               "invite_link": invite_link}
    response = render(request, "review/admin/reviewers.html", context, status=400 if error else 200)
    if created is not None:
        response["Cache-Control"] = "no-store"  # the one-time password or invitation link is on this page
    return response


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_reviewer_active(request: HttpRequest, user_id: int) -> HttpResponse:
    user = user_or_404(user_id)
    active = request.POST.get("active") in ("1", "true", "on")
    try:
        accounts.reviewer_account_set_active(user=user, active=active, by=request.user)
    except accounts.AccountError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"{user.get_username()} {'reactivated' if active else 'deactivated'}. "
                         "Their judgments stay; reassign their open items on each pool's page.")
    return redirect("review:reviewers")
