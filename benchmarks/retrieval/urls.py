"""Retrieval runs: launching one, and its page.

Included by benchmarks/urls.py (namespace "benchmarks").
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("benchmarks.retrieval.views")

urlpatterns = [
    path("retrieval/new/", views.retrieval_run_new, name="retrieval-run-new"),
    path("retrieval/<int:pk>/", views.retrieval_run_detail, name="retrieval-run"),
]
