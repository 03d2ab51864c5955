from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("reviewapp.providers.views")


app_name = "providers"
urlpatterns: list = [
    path("ledgers/<int:pk>/receipts.jsonl", views.ledger_receipts_jsonl, name="ledger-receipts"),
]
