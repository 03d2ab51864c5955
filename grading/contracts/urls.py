"""The firm's contracts, included by grading/urls.py under /cuad/contracts/ (namespace "cuad")."""

from django.urls import path

from grading.contracts.gold.urls import urlpatterns as _gold_urlpatterns
from reviewapp.core.lazy_views import lazy_module

views = lazy_module("grading.contracts.views")


urlpatterns = [
    path("contracts/", views.sets_page, name="contract-sets"),
    path("contracts/<int:pk>/", views.set_page, name="contract-set"),
    path("contracts/<int:pk>/taxonomy/", views.taxonomy_page, name="contract-taxonomy"),
    path("contracts/<int:pk>/<int:contract_pk>/", views.contract_page, name="contract"),
]
# Gold labels (agreement, adjudication, frozen gold sets): their own URL module.
urlpatterns += _gold_urlpatterns
