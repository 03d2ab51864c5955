"""The CUAD dataset page and its exports. Included by grading/urls.py (namespace "cuad")."""

from grading.export_urls import page_with_exports
from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("grading.dataset.views")

urlpatterns = [
    *page_with_exports("dataset/", views.dataset, name="dataset"),
]
