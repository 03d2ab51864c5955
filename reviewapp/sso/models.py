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
