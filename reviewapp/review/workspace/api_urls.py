"""The reviewer's API, under /api/v1/review/ (included by reviewapp/review/api_urls.py, namespace "review-api")."""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

api = lazy_module("reviewapp.review.workspace.api")

urlpatterns = [
    path("queue/", api.QueueApi.as_view(), name="queue"),
    path("items/<str:item_id>/", api.ItemApi.as_view(), name="item"),
    path("items/<str:item_id>/judgment/", api.JudgmentApi.as_view(), name="judgment"),
    path("items/<str:item_id>/judgment/reopen/", api.JudgmentReopenApi.as_view(), name="judgment-reopen"),
    path("items/<str:item_id>/history/", api.HistoryApi.as_view(), name="history"),
]
