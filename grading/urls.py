"""The CUAD console under /cuad/ (login required; reviewers get 403); a page's exports are files below it."""

from django.urls import path

from grading.contracts.urls import urlpatterns as _contracts_urlpatterns
from grading.export_urls import page_with_exports
from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("grading.views")
audits_views = lazy_module("grading.audits.views")
dataset_views = lazy_module("grading.dataset.views")
runs_views = lazy_module("grading.runs.views")
scorecard_views = lazy_module("grading.scorecard.views")

app_name = "cuad"
urlpatterns = [
    *page_with_exports("", views.home, name="home", stem="overview"),
    *page_with_exports("dataset/", dataset_views.dataset, name="dataset"),
    *page_with_exports("runs/", runs_views.runs, name="runs"),
    path("runs/launch/", runs_views.launch, name="launch"),
    *page_with_exports("runs/<int:pk>/", runs_views.run_detail, name="run"),
    *page_with_exports("jobs/<int:pk>/", runs_views.job_detail, name="job"),
    path("jobs/<int:pk>/progress/", runs_views.job_progress, name="job-progress"),
    path("jobs/<int:pk>/resume/", runs_views.job_resume, name="job-resume"),
    *page_with_exports("scorecard/", scorecard_views.scorecard, name="scorecard"),
    *page_with_exports("leaderboard/", scorecard_views.leaderboard, name="leaderboard"),
    path("summary/", scorecard_views.summary, name="summary"),
    path("summary/summary.pdf", scorecard_views.summary_pdf, name="summary-pdf"),
    *page_with_exports("explorer/", scorecard_views.explorer, name="explorer"),
    *page_with_exports("playground/", scorecard_views.playground, name="playground"),
    *page_with_exports("audits/", audits_views.audits, name="audits"),
    *page_with_exports("audits/<int:pk>/", audits_views.audit_detail, name="audit"),
    path("audits/<int:pk>/progress/", audits_views.audit_progress, name="audit-progress"),
    path("audits/<int:pk>/resume/", audits_views.audit_resume, name="audit-resume"),
    path("audits/<int:pk>/review/", audits_views.audit_review, name="audit-review"),
]
# The firm's own contracts: their own URL module (grading.contracts.urls), same namespace.
urlpatterns += _contracts_urlpatterns
