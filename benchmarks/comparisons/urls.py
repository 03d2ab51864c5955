"""Comparisons planned together, declared before any of their held-out figures exist.

Included by benchmarks/urls.py (namespace "benchmarks").
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("benchmarks.comparisons.views")

urlpatterns = [
    path("comparisons/", views.comparison_index, name="comparisons"),
    path("comparisons/declare/<int:pk>/", views.comparison_declare_view, name="comparison-declare"),
]
