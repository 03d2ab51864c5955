"""Extraction runs and the jobs that make or grade them: lists, launch, pages, progress, resume.

Included by grading/urls.py (namespace "cuad").
"""

from django.urls import path

from grading.export_urls import page_with_exports
from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("grading.runs.views")

urlpatterns = [
    *page_with_exports("runs/", views.runs, name="runs"),
    path("runs/launch/", views.launch, name="launch"),
    *page_with_exports("runs/<int:pk>/", views.run_detail, name="run"),
    *page_with_exports("jobs/<int:pk>/", views.job_detail, name="job"),
    path("jobs/<int:pk>/progress/", views.job_progress, name="job-progress"),
    path("jobs/<int:pk>/resume/", views.job_resume, name="job-resume"),
]
