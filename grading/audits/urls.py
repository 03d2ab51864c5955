"""Audits of the gold labels by two judges: list, page, the lawyers' review of flagged spans (resume and progress:
``reviewapp.jobs``).

Included by grading/urls.py (namespace "cuad").
"""

from django.urls import path

from grading.export_urls import page_with_exports
from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("grading.audits.views")

urlpatterns = [
    *page_with_exports("audits/", views.audits, name="audits"),
    *page_with_exports("audits/<int:pk>/", views.audit_detail, name="audit"),
    path("audits/<int:pk>/review/", views.audit_review, name="audit-review"),
]
