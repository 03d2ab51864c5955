"""Suites: a frozen suite and its exports, the workbench where drafts are written and frozen, and the
confirmation of provisional targets by lawyers.

Included by benchmarks/urls.py (namespace "benchmarks").
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("benchmarks.suites.views")

urlpatterns = [
    path("suites/<int:pk>/", views.suite_detail, name="suite"),
    path("suites/<int:pk>/export/<str:fmt>", views.suite_export, name="suite-export"),
    path("suites/<int:pk>/new-version/", views.suite_new_version, name="suite-new-version"),
    path("suites/workbench/", views.workbench_index, name="workbench"),
    path("suites/workbench/import/", views.workbench_import, name="workbench-import"),
    path("suites/workbench/<int:pk>/", views.workbench_draft, name="workbench-draft"),
    path("suites/workbench/<int:pk>/edit/", views.workbench_edit, name="workbench-edit"),
    path("suites/workbench/<int:pk>/search/", views.workbench_search, name="workbench-search"),
    path("suites/workbench/<int:pk>/provisions/<int:provision_pk>/", views.workbench_provision,
         name="workbench-provision"),
    path("suites/workbench/<int:pk>/freeze/", views.workbench_freeze, name="workbench-freeze"),
    path("suites/confirmation/items/<str:item_id>/propose/", views.confirmation_propose,
         name="confirmation-propose"),
    path("suites/<int:pk>/confirmation/declare/", views.confirmation_declare, name="confirmation-declare"),
    path("suites/<int:pk>/confirmation/new-version/", views.confirmation_new_version,
         name="confirmation-new-version"),
]
