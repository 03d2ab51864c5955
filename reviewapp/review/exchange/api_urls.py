"""API of the label exchange, under /api/v1/review/pools/<pool id>/ (included by reviewapp/review/api_urls.py)."""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

exchange_api = lazy_module("reviewapp.review.exchange.api")

urlpatterns = [
    path("<str:pool_id>/label-studio/", exchange_api.LabelStudioExportApi.as_view(), name="label-studio"),
    path("<str:pool_id>/argilla/", exchange_api.ArgillaExportApi.as_view(), name="argilla"),
    path("<str:pool_id>/label-imports/", exchange_api.LabelImportsApi.as_view(), name="label-imports"),
    path("<str:pool_id>/imported-labels/", exchange_api.ImportedLabelsApi.as_view(), name="imported-labels"),
]
