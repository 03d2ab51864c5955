"""Pages of the blinded review, under /review/.

Reviewer URLs carry only opaque random ids. Admin pages live under /review/admin/.
"""

from django.urls import path

from reviewapp.review import views as views

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
]
