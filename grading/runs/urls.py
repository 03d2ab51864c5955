"""Extraction runs and the jobs that make or grade them under runs/: lists, launch, pages (a job's resume and
progress: ``reviewapp.jobs``).

A job's pages lived under jobs/ before; those paths answer with a permanent redirect.

Included by grading/urls.py (namespace "cuad").
"""

from django.urls import path

from grading.export_urls import page_with_exports
from reviewapp.core.http.lazy_views import lazy_module
from reviewapp.core.http.moved import moved

views = lazy_module("grading.runs.views")

urlpatterns = [
    *page_with_exports("runs/", views.runs, name="runs"),
    path("runs/launch/", views.launch, name="launch"),
    *page_with_exports("runs/<int:pk>/", views.run_detail, name="run"),
    *page_with_exports("runs/jobs/<int:pk>/", views.job_detail, name="job"),
    moved("jobs/<int:pk>/", "cuad:job"),
    moved("jobs/<int:pk>/job.<str:fmt>", "cuad:job-export"),
]
