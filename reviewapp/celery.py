"""The Celery application: tasks are thin and take ids (see each feature's tasks.py)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")

app = Celery("reviewapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Tasks live with the feature that owns them, not at each app's root, so the packages are named here
# (the project package wires everything; a worker must register every task before it takes one).
app.autodiscover_tasks(["reviewapp.core", "benchmarks.rerank", "grading.runs"])
