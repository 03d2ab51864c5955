"""The Django project: settings, URLs, Celery, WSGI/ASGI. Shared layers in core/, review/, providers/."""

from reviewapp.celery import app as celery_app

__all__ = ["celery_app"]
