from django.utils.translation import gettext_lazy as _
from oidc_provider.lib.claims import ScopeClaims


class GroupsClaims(ScopeClaims):
    """The ``groups`` scope: the names of the user's Django groups at the IdP (as Okta and Entra ID send)."""

    info_groups = (_("Groups"), _("The groups you belong to."))

    def scope_groups(self) -> dict:
        return {"groups": sorted(self.user.groups.values_list("name", flat=True))}
