"""A tiny OpenID Connect provider (django-oidc-provider) the SSO tests start on loopback: its own settings,
its own SQLite file, its own gunicorn process. Nothing of the product is imported here."""
