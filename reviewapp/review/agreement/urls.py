"""Admin pages of a pool's judgments read together, under /review/agreement/<pool id>/ (included by
reviewapp/review/urls.py, namespace "review"): adjudication, the walk through disagreements, the exports.

The walk and the exports lived under /review/admin/pools/<pool id>/ before (the adjudication notices link to the
walk, scripts fetch the exports); those paths answer with a permanent redirect.
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module
from reviewapp.core.http.moved import moved

views = lazy_module("reviewapp.review.agreement.views")

urlpatterns = [
    path("agreement/<str:pool_id>/items/<str:item_id>/adjudicate/", views.admin_adjudicate, name="adjudicate"),
    path("agreement/<str:pool_id>/disagreements/next/", views.admin_disagreement_next, name="disagreement-next"),
    path("agreement/<str:pool_id>/qrels.txt", views.admin_qrels, name="qrels"),
    path("agreement/<str:pool_id>/judgments.jsonl", views.admin_jsonl, name="jsonl"),
    moved("admin/pools/<str:pool_id>/disagreements/next/", "review:disagreement-next"),
    # Exports that scripts fetch by their old paths.
    moved("admin/pools/<str:pool_id>/qrels.txt", "review:qrels"),
    moved("admin/pools/<str:pool_id>/judgments.jsonl", "review:jsonl"),
]
