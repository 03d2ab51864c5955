"""Reading grades under scorecard/: the scorecard, the leaderboard, the one-page summary, the explorer and the
playground. The last four lived at the console's top level before; those paths answer with a permanent redirect.

Included by grading/urls.py (namespace "cuad").
"""

from django.urls import path

from grading.export_urls import page_with_exports
from reviewapp.core.http.lazy_views import lazy_module
from reviewapp.core.http.moved import moved

views = lazy_module("grading.scorecard.views")

urlpatterns = [
    *page_with_exports("scorecard/", views.scorecard, name="scorecard"),
    *page_with_exports("scorecard/leaderboard/", views.leaderboard, name="leaderboard"),
    path("scorecard/summary/", views.summary, name="summary"),
    path("scorecard/summary/summary.pdf", views.summary_pdf, name="summary-pdf"),
    *page_with_exports("scorecard/explorer/", views.explorer, name="explorer"),
    *page_with_exports("scorecard/playground/", views.playground, name="playground"),
    *(moved(f"{page}/", f"cuad:{page}") for page in ("leaderboard", "summary", "explorer", "playground")),
    *(moved(f"{page}/{page}.<str:fmt>", f"cuad:{page}-export") for page in ("leaderboard", "explorer", "playground")),
    moved("summary/summary.pdf", "cuad:summary-pdf"),
]
