"""The Django project package and the blinded-review app."""

from reviewapp.celery import app as celery_app

__all__ = ["celery_app"]
