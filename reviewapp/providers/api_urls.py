from django.urls import path

from reviewapp.providers import api

app_name = "providers-api"
urlpatterns: list = [
    path("ledgers/<int:pk>/", api.LedgerApi.as_view(), name="ledger"),
]
