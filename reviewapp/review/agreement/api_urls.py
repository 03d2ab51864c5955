"""API of a pool's judgments read together, under /api/v1/review/ (included by reviewapp/review/api_urls.py,
namespace "review-api")."""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

api = lazy_module("reviewapp.review.agreement.api")

urlpatterns = [
    path("pools/<str:pool_id>/progress/", api.ProgressApi.as_view(), name="progress"),
    path("pools/<str:pool_id>/agreement/", api.AgreementApi.as_view(), name="agreement"),
    path("pools/<str:pool_id>/qrels/", api.QrelsApi.as_view(), name="qrels"),
    path("pools/<str:pool_id>/judgments/", api.JudgmentsExportApi.as_view(), name="judgments"),
]
