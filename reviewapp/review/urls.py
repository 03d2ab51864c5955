"""Pages of the blinded review, under /review/.

Reviewer URLs carry only opaque random ids. Admin pages live under /review/admin/. The features with pages of
their own keep them in their folder's urls.py, included here under the same paths and the same "review"
namespace: people/ (workload, reviewer accounts, reliability) and exchange/ (Label Studio and Argilla).
"""

from django.urls import include, path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("reviewapp.review.views")

app_name = "review"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("items/<str:item_id>/", views.item, name="item"),
    path("items/<str:item_id>/history/", views.history, name="history"),
    path("admin/", views.admin_pools, name="admin-pools"),
    path("admin/new/", views.admin_pool_new, name="admin-pool-new"),
    path("admin/labels/import/", views.admin_label_import, name="admin-label-import"),
    path("admin/pools/<str:pool_id>/", views.admin_pool, name="admin-pool"),
    path("admin/pools/<str:pool_id>/assign/", views.admin_pool_assign, name="admin-pool-assign"),
    path("admin/pools/<str:pool_id>/unassign/", views.admin_pool_unassign, name="admin-pool-unassign"),
    path("admin/pools/<str:pool_id>/reassign/", views.admin_pool_reassign, name="admin-pool-reassign"),
    path("admin/pools/<str:pool_id>/new-version/", views.admin_pool_new_version, name="admin-pool-new-version"),
    path("admin/reviewers/", views.admin_reviewers, name="admin-reviewers"),
    path("admin/reviewers/<int:user_id>/active/", views.admin_reviewer_active, name="admin-reviewer-active"),
    path("admin/pools/<str:pool_id>/items/<str:item_id>/adjudicate/", views.admin_adjudicate,
         name="admin-adjudicate"),
    path("admin/pools/<str:pool_id>/qrels.txt", views.admin_qrels, name="admin-qrels"),
    path("admin/pools/<str:pool_id>/judgments.jsonl", views.admin_jsonl, name="admin-jsonl"),
    # Label exchange: Label Studio and Argilla out, their annotations in (not blind)
    path("admin/pools/", include("reviewapp.review.exchange.urls")),
    # People and reliability
    path("", include("reviewapp.review.people.urls")),
]
