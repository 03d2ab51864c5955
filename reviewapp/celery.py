"""The Celery application: tasks are thin and take ids (see each feature's tasks.py).

Tasks are ``@shared_task``: nothing below the project package imports this module (an import-linter contract).
The worker (``celery -A reviewapp``) loads it and finds the tasks below; a process that sends a task loads it
through ``settings.JOB_CELERY_APP`` (``reviewapp.core.jobs.celery_app``), which makes it Celery's current app.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
# Celery's Django fixup runs Django's system checks when a worker starts, and the URL checks import the whole
# URL config: every view, the API modules and drf-spectacular (with django.test and jinja2), ~420 modules and
# ~27 MiB a worker never uses (a task reverses no URL and renders no page). The checks run where they belong:
# `manage.py check` and `migrate` in CI and on deploy. An operator's own setting wins.
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

app = Celery("reviewapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Tasks live with the feature that owns them, not at each app's root, so the packages are named here
# (the project package wires everything; a worker must register every task before it takes one).
app.autodiscover_tasks(["reviewapp.core", "reviewapp.notifications", "benchmarks.rerank", "grading.runs",
                        "grading.audits"])
