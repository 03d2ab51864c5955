"""Audits of the gold labels by two judges: list, page, progress, resume, the lawyers' review of flagged spans.

Included by grading/urls.py (namespace "cuad").
"""

from django.urls import path

from grading.export_urls import page_with_exports
from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("grading.audits.views")

urlpatterns = [
    *page_with_exports("audits/", views.audits, name="audits"),
    *page_with_exports("audits/<int:pk>/", views.audit_detail, name="audit"),
    path("audits/<int:pk>/progress/", views.audit_progress, name="audit-progress"),
    path("audits/<int:pk>/resume/", views.audit_resume, name="audit-resume"),
    path("audits/<int:pk>/review/", views.audit_review, name="audit-review"),
]
