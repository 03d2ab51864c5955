"""API of the label exchange, under /api/v1/review/ (included by reviewapp/review/api_urls.py, namespace
"review-api"): a pool's exports and imports, and imported label sources."""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

exchange_api = lazy_module("reviewapp.review.exchange.api")

urlpatterns = [
    path("pools/<str:pool_id>/label-studio/", exchange_api.LabelStudioExportApi.as_view(), name="label-studio"),
    path("pools/<str:pool_id>/argilla/", exchange_api.ArgillaExportApi.as_view(), name="argilla"),
    path("pools/<str:pool_id>/label-imports/", exchange_api.LabelImportsApi.as_view(), name="label-imports"),
    path("pools/<str:pool_id>/imported-labels/", exchange_api.ImportedLabelsApi.as_view(), name="imported-labels"),
    path("label-sources/", exchange_api.LabelSourcesApi.as_view(), name="label-sources"),
]
