"""API of assignment, under /api/v1/review/ (included by reviewapp/review/api_urls.py, namespace "review-api")."""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

api = lazy_module("reviewapp.review.assignment.api")

urlpatterns = [
    path("pools/<str:pool_id>/assign/", api.AssignApi.as_view(), name="assign"),
]
