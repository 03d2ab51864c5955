"""The request types views are annotated with: Django's HttpRequest plus what this project's middleware adds."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails
from rest_framework.request import Request


class HtmxHttpRequest(HttpRequest):
    """Any request: django-htmx's middleware (in MIDDLEWARE for every request) sets ``htmx``."""

    htmx: HtmxDetails


class SignedInHttpRequest(HtmxHttpRequest):
    """A request to a view behind ``login_required`` (or a role check): ``user`` is a User, not AnonymousUser."""

    user: User


class SignedInRequest(Request):
    """A DRF request to an API view whose permission classes refuse anonymous callers: ``user`` is a User."""

    user: User
