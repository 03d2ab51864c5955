"""Rerank URLs, included by benchmarks/urls.py (namespace "benchmarks")."""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views_rerank = lazy_module("benchmarks.rerank.views")


urlpatterns = [
    path("rerank/", views_rerank.rerank_run_list, name="rerank-runs"),
    path("rerank/new/", views_rerank.rerank_run_new, name="rerank-run-new"),
    path("rerank/<int:pk>/", views_rerank.rerank_run_detail, name="rerank-run"),
    path("rerank/<int:pk>/cancel/", views_rerank.rerank_run_cancel, name="rerank-run-cancel"),
    path("rerank/<int:pk>/receipts.jsonl", views_rerank.rerank_run_receipts, name="rerank-run-receipts"),
]
