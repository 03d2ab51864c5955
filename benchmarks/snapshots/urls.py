"""What changed between two snapshots of a code.

Included by benchmarks/urls.py (namespace "benchmarks").
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("benchmarks.snapshots.views")

urlpatterns = [
    path("snapshots/<int:pk>/changes/", views.snapshot_changes, name="snapshot-changes"),
]
