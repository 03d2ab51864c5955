"""API of the blinded review, under /api/v1/review/.

Reviewer: queue/, items/<id>/, items/<id>/judgment/ (+ reopen/), items/<id>/history/ (own only).
Admin: pools/, pools/<id>/assign|progress|agreement|qrels|judgments/, label-sources/;
label exchange: pools/<id>/label-studio/, pools/<id>/argilla/, pools/<id>/label-imports/,
pools/<id>/imported-labels/ (not blind; reviewapp/review/exchange/api_urls.py, included here).
"""

from django.urls import include, path

from reviewapp.core.http.lazy_views import lazy_module

api = lazy_module("reviewapp.review.api")

app_name = "review-api"
urlpatterns = [
    path("queue/", api.QueueApi.as_view(), name="queue"),
    path("items/<str:item_id>/", api.ItemApi.as_view(), name="item"),
    path("items/<str:item_id>/judgment/", api.JudgmentApi.as_view(), name="judgment"),
    path("items/<str:item_id>/judgment/reopen/", api.JudgmentReopenApi.as_view(), name="judgment-reopen"),
    path("items/<str:item_id>/history/", api.HistoryApi.as_view(), name="history"),
    path("pools/", api.PoolsApi.as_view(), name="pools"),
    path("pools/<str:pool_id>/assign/", api.AssignApi.as_view(), name="assign"),
    path("pools/<str:pool_id>/progress/", api.ProgressApi.as_view(), name="progress"),
    path("pools/<str:pool_id>/agreement/", api.AgreementApi.as_view(), name="agreement"),
    path("pools/<str:pool_id>/qrels/", api.QrelsApi.as_view(), name="qrels"),
    path("pools/<str:pool_id>/judgments/", api.JudgmentsExportApi.as_view(), name="judgments"),
    path("pools/", include("reviewapp.review.exchange.api_urls")),
    path("label-sources/", api.LabelSourcesApi.as_view(), name="label-sources"),
]
