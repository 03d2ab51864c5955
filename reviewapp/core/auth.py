"""Login with a failed-attempt limit per username and client address."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.core.cache import cache


def _attempt_key(username: str, address: str) -> str:
    return f"login-failures:{address}:{username.strip().lower()[:150]}"


class RateLimitedAuthenticationForm(AuthenticationForm):
    def clean(self) -> dict:
        username = self.data.get("username", "")
        address = self.request.META.get("REMOTE_ADDR", "") if self.request else ""
        key = _attempt_key(username, address)
        if cache.get(key, 0) >= settings.LOGIN_RATE_LIMIT:
            minutes = max(1, settings.LOGIN_RATE_WINDOW_SECONDS // 60)
            raise forms.ValidationError(
                f"Too many failed sign-in attempts for this account from your address. "
                f"Try again in {minutes} minutes.",
                code="rate_limited",
            )
        try:
            return super().clean()
        except forms.ValidationError:
            try:
                cache.incr(key)
            except ValueError:
                cache.set(key, 1, timeout=settings.LOGIN_RATE_WINDOW_SECONDS)
            raise


class RateLimitedLoginView(LoginView):
    form_class = RateLimitedAuthenticationForm
    redirect_authenticated_user = True
