from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in, user_logged_out


class SsoConfig(AppConfig):
    """OpenID Connect sign-in (mozilla-django-oidc) with the IdP's groups mapped to the roles, and the record of
    each account's browser sessions that lets an admin list and end them."""

    name = "reviewapp.sso"
    label = "sso"
    verbose_name = "Single sign-on and sessions"
    # Backed up: an account's link to its IdP subject must survive a restore, or the person would come back as
    # a new account without their judgments. (The session record is left out: reviewapp/core/backup.py.)
    product_data = True

    def ready(self) -> None:
        # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
        from reviewapp.sso.sessions import user_session_forget, user_session_record

        user_logged_in.connect(user_session_record, dispatch_uid="sso-session-record")
        user_logged_out.connect(user_session_forget, dispatch_uid="sso-session-forget")
