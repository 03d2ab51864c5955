"""Gold labels of a contract set, included by grading/contracts/urls.py (namespace "cuad")."""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("grading.contracts.gold.views")

urlpatterns = [
    path("contracts/<int:pk>/gold/", views.gold_page, name="contract-gold"),
    path("contracts/<int:pk>/gold/start/", views.gold_labelling_start, name="contract-gold-start"),
    path("contracts/<int:pk>/gold/freeze/", views.gold_freeze, name="contract-gold-freeze"),
    path("contracts/<int:pk>/gold/v<int:version>/", views.gold_set_page, name="contract-gold-set"),
    path("contracts/<int:pk>/gold/v<int:version>/gold.json", views.gold_set_download, {"fmt": "json"},
         name="contract-gold-json"),
    path("contracts/<int:pk>/gold/v<int:version>/gold.provenance.json", views.gold_set_download,
         {"fmt": "provenance"}, name="contract-gold-provenance"),
    path("contracts/<int:pk>/gold/v<int:version>/gold.csv", views.gold_set_download, {"fmt": "csv"},
         name="contract-gold-csv"),
    path("contracts/<int:pk>/gold/adjudicate/<str:pool_id>/<str:item_id>/", views.gold_adjudicate,
         name="contract-gold-adjudicate"),
]
