"""The token scheme as the API schema names it: a drf-spectacular extension, kept out of reviewapp.core.auth.

drf-spectacular finds extensions by subclassing, so this module only has to be imported before a schema is
generated; the URL config imports it (the schema views and ``manage.py spectacular`` both load the URL
config first). Kept apart because importing drf_spectacular.extensions pulls in drf-spectacular's plumbing,
rest_framework.test and django.test, which every process importing the auth module (the admin, every
management command) would otherwise pay for at start-up.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class HashedTokenScheme(OpenApiAuthenticationExtension):
    """Names the token scheme in the API schema (drf-spectacular finds it by subclassing)."""

    target_class = "reviewapp.core.auth.HashedTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict:
        return {"type": "apiKey", "in": "header", "name": "Authorization",
                "description": "Token <key>; make one on /accounts/tokens/ (expires; dies with a password change)."}
