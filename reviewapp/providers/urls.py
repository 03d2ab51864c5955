from django.urls import path

from reviewapp.providers import views

app_name = "providers"
urlpatterns: list = [
    path("ledgers/<int:pk>/receipts.jsonl", views.ledger_receipts_jsonl, name="ledger-receipts"),
]
