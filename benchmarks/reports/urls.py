"""Reports of a retrieval or rerank run, statute leaderboards and the one-page summary, with their exports.

Included by benchmarks/urls.py (namespace "benchmarks").
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("benchmarks.reports.views")

urlpatterns = [
    path("reports/", views.report_index, name="reports"),
    path("reports/rerank/<int:pk>/", views.report_page, {"source": "rerank"}, name="report-rerank"),
    path("reports/rerank/<int:pk>/<str:export>", views.report_export, {"source": "rerank"},
         name="report-rerank-export"),
    path("reports/retrieval/<int:pk>/", views.report_page, {"source": "retrieval"}, name="report-retrieval"),
    path("reports/retrieval/<int:pk>/<str:export>", views.report_export, {"source": "retrieval"},
         name="report-retrieval-export"),
    path("reports/leaderboard/", views.leaderboard_index, name="leaderboards"),
    path("reports/leaderboard/<int:pk>/", views.leaderboard_page, name="leaderboard"),
    path("reports/leaderboard/<int:pk>/<str:export>", views.leaderboard_export, name="leaderboard-export"),
    path("reports/summary/<int:pk>/", views.summary_page, name="summary"),
    path("reports/summary/<int:pk>/summary.pdf", views.summary_pdf, name="summary-pdf"),
]
