"""Changes to the loopback IdP's database, run by the tests as ``python -m tests.reviewapp.sso.idp_site.tool``
with one JSON argument: {"key": PEM} sets the signing key, {"client": {...}} registers the product,
{"user": {"username", "password", "email", "groups", "active"}} creates or changes a person."""

import json
import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.reviewapp.sso.idp_site.settings")


def main(raw: str) -> None:
    django.setup()
    from django.contrib.auth.models import Group, User
    from oidc_provider.models import Client, ResponseType, RSAKey

    change = json.loads(raw)
    if "key" in change:
        RSAKey.objects.all().delete()
        key = RSAKey.objects.create(key=change["key"])
        print(json.dumps({"kid": key.kid}))
    if "client" in change:
        spec = change["client"]
        client, _ = Client.objects.update_or_create(client_id=spec["client_id"], defaults={
            "name": "reviewapp", "client_type": "confidential", "client_secret": spec["client_secret"],
            "jwt_alg": "RS256", "require_consent": False, "reuse_consent": True,
            "_redirect_uris": "\n".join(spec["redirect_uris"]),
            "_post_logout_redirect_uris": "\n".join(spec.get("post_logout_redirect_uris", [])),
            "_scope": "openid email profile groups"})
        client.response_types.set(ResponseType.objects.filter(value="code"))
    if "user" in change:
        spec = change["user"]
        user, _ = User.objects.get_or_create(username=spec["username"])
        if "password" in spec:
            user.set_password(spec["password"])
        user.email = spec.get("email", user.email)
        user.first_name = spec.get("first_name", user.first_name)
        user.is_active = spec.get("active", True)
        user.save()
        if "groups" in spec:
            user.groups.set([Group.objects.get_or_create(name=name)[0] for name in spec["groups"]])
        print(json.dumps({"sub": str(user.pk)}))


if __name__ == "__main__":
    main(sys.argv[1])
