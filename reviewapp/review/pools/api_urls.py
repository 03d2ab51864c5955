"""API of pools, under /api/v1/review/ (included by reviewapp/review/api_urls.py, namespace "review-api")."""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

api = lazy_module("reviewapp.review.pools.api")

urlpatterns = [
    path("pools/", api.PoolsApi.as_view(), name="pools"),
]
