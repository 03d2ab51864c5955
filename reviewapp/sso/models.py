from __future__ import annotations

from django.conf import settings
from django.db import models


class OidcIdentity(models.Model):
    """The link from an IdP's subject to an account here: (issuer, sub) is who the IdP says signed in.

    Accounts are found by this link only, never by e-mail: an e-mail address can be re-issued at the IdP or
    typed into a local account, and must not hand that account to someone else.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oidc_identities")
    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)
    last_signin_at = models.DateTimeField(null=True, blank=True)
    # The IdP groups at the last sign-in (shown to admins: why this account holds its roles).
    groups = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="sso_identity_unique_subject")]
        verbose_name = "OpenID Connect identity"
        verbose_name_plural = "OpenID Connect identities"

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"


class UserSession(models.Model):
    """One signed-in browser session of an account, recorded at sign-in so an admin can list and end it.

    Django's session table does not say whose a session is without decoding every row; this side table does.
    The session itself stays Django's (``SESSION_ENGINE``): a row whose session has expired or ended is not
    listed, and is removed when the account signs out or is signed out everywhere.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="browser_sessions")
    session_key = models.CharField(max_length=64, unique=True)
    started_at = models.DateTimeField(auto_now_add=True)
    signin_method = models.CharField(max_length=16, blank=True)
    signin_issuer = models.CharField(max_length=255, blank=True)
    address = models.CharField(max_length=64, blank=True)
    user_agent = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"session {self.pk} of user {self.user_id}"
