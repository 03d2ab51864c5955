"""Reading grades: the scorecard, the leaderboard, the one-page summary, the explorer and the playground.

Included by grading/urls.py (namespace "cuad").
"""

from django.urls import path

from grading.export_urls import page_with_exports
from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("grading.scorecard.views")

urlpatterns = [
    *page_with_exports("scorecard/", views.scorecard, name="scorecard"),
    *page_with_exports("leaderboard/", views.leaderboard, name="leaderboard"),
    path("summary/", views.summary, name="summary"),
    path("summary/summary.pdf", views.summary_pdf, name="summary-pdf"),
    *page_with_exports("explorer/", views.explorer, name="explorer"),
    *page_with_exports("playground/", views.playground, name="playground"),
]
