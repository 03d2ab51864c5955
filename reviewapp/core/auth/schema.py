"""The token scheme as the API schema names it: a drf-spectacular extension, kept out of core/auth/credentials.py.

drf-spectacular finds extensions by subclassing, so this module only has to be imported before a schema is
generated: it holds the generator class SPECTACULAR_SETTINGS names (``DEFAULT_GENERATOR_CLASS``), which the schema
views and ``manage.py spectacular`` both load before they generate. Kept apart, and out of the URL config,
because importing drf_spectacular.extensions pulls in drf-spectacular's plumbing, DRF (and psycopg through it),
rest_framework.test and django.test: about 0.5 s and 25 MB that every process loading the URL config (each
``manage.py check``, each command running the system checks) would otherwise pay.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.generators import SchemaGenerator as _SpectacularGenerator


class SchemaGenerator(_SpectacularGenerator):
    """drf-spectacular's generator, named in the settings so that loading it registers the extension below."""


class HashedTokenScheme(OpenApiAuthenticationExtension):
    """Names the token scheme in the API schema (drf-spectacular finds it by subclassing)."""

    target_class = "reviewapp.core.auth.credentials.HashedTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict:
        return {"type": "apiKey", "in": "header", "name": "Authorization",
                "description": "Token <key>; make one on /accounts/tokens/ (expires; dies with a password change)."}
