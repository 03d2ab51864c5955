"""Settings of the loopback identity provider: every path and URL comes from the test that starts it."""

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
SECRET_KEY = "loopback-identity-provider-for-tests-only-0123456789abcdef"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "oidc_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "tests.reviewapp.sso.idp_site.urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [HERE / "templates"],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": ["django.template.context_processors.request",
                                       "django.contrib.auth.context_processors.auth",
                                       "django.contrib.messages.context_processors.messages"]},
}]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ.get("IDP_DB", ":memory:"),
                         "OPTIONS": {"timeout": 20}}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
LOGIN_URL = "/login/"
# The issuer is SITE_URL + "/openid" (oidc_provider.lib.utils.common.get_issuer).
SITE_URL = os.environ.get("IDP_SITE_URL", "http://127.0.0.1")
OIDC_IDTOKEN_INCLUDE_CLAIMS = True
OIDC_EXTRA_SCOPE_CLAIMS = "tests.reviewapp.sso.idp_site.claims.GroupsClaims"
OIDC_IDTOKEN_EXPIRE = 600
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # test users only; fast
