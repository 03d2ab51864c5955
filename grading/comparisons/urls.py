"""CUAD comparisons under comparisons/: the list and the declaration form.

Included by grading/urls.py (namespace "cuad").
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("grading.comparisons.views")

urlpatterns = [
    path("comparisons/", views.comparisons, name="comparisons"),
]
