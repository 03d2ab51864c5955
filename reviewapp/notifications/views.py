"""A user's own email choices: /accounts/notifications/."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render

from reviewapp.core.auth.roles import MANAGE_REVIEWS
from reviewapp.core.http.requests import SignedInHttpRequest
from reviewapp.notifications.models import NotificationKind, NotificationPreference


@login_required
def preferences(request: SignedInHttpRequest) -> HttpResponse:
    preference, _ = NotificationPreference.objects.get_or_create(user=request.user)
    # Adjudication notices are for those who adjudicate.
    kinds = [(value, label) for value, label in NotificationKind.choices
             if value != "adjudication" or request.user.has_perm(MANAGE_REVIEWS)]
    if request.method == "POST":
        for value, _ in kinds:
            setattr(preference, value, request.POST.get(value) == "on")
        preference.save()
        messages.success(request, "Your email choices are saved.")
        return redirect("notification-preferences")
    return render(request, "notifications/preferences.html", {
        "choices": [(value, label, preference.wants(value)) for value, label in kinds],
        "email": request.user.email,
    })
