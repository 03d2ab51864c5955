from django.apps import AppConfig


class SsoConfig(AppConfig):
    """OpenID Connect sign-in (mozilla-django-oidc) with the IdP's groups mapped to the roles."""

    name = "reviewapp.sso"
    label = "sso"
    verbose_name = "Single sign-on"
