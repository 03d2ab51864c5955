"""The firm's contracts, included by grading/urls.py under /cuad/contracts/ (namespace "cuad")."""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("grading.contracts.views")


urlpatterns = [
    path("contracts/", views.sets_page, name="contract-sets"),
    path("contracts/<int:pk>/", views.set_page, name="contract-set"),
    path("contracts/<int:pk>/taxonomy/", views.taxonomy_page, name="contract-taxonomy"),
    path("contracts/<int:pk>/<int:contract_pk>/", views.contract_page, name="contract"),
]
