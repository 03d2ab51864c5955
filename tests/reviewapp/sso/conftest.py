from tests.reviewapp.sso.idp import idp, sso_on  # noqa: F401  (the loopback IdP and the product set up for it)
