from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

api = lazy_module("reviewapp.providers.api")


app_name = "providers-api"
urlpatterns: list = [
    path("ledgers/<int:pk>/", api.LedgerApi.as_view(), name="ledger"),
]
