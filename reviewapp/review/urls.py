"""Pages of the blinded review, under /review/.

Reviewer URLs carry only opaque random ids. Admin pages live under /review/admin/.
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

admin_views = lazy_module("reviewapp.review.people.views")
views = lazy_module("reviewapp.review.views")
exchange_views = lazy_module("reviewapp.review.exchange.views")

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
    # Label exchange (exchange.views): Label Studio and Argilla out, their annotations in (not blind)
    path("admin/pools/<str:pool_id>/label-studio-tasks.json", exchange_views.labelstudio_tasks_download,
         name="admin-label-studio-tasks"),
    path("admin/pools/<str:pool_id>/label-studio-config.xml", exchange_views.labelstudio_config_download,
         name="admin-label-studio-config"),
    path("admin/pools/<str:pool_id>/argilla.zip", exchange_views.argilla_download, name="admin-argilla"),
    path("admin/pools/<str:pool_id>/label-imports/", exchange_views.labels_upload, name="admin-label-imports"),
    path("admin/pools/<str:pool_id>/imported-labels.jsonl", exchange_views.imported_labels_download,
         name="admin-imported-labels"),
    # People and reliability (admin_views)
    path("admin/workload/", admin_views.admin_workload, name="admin-workload"),
    path("admin/workload/time.csv", admin_views.admin_workload_time_csv, name="admin-workload-time-csv"),
    path("admin/workload/reassign/", admin_views.admin_workload_reassign, name="admin-workload-reassign"),
    path("admin/reviewers/<int:user_id>/", admin_views.admin_reviewer, name="admin-reviewer"),
    path("admin/reviewers/<int:user_id>/invite/", admin_views.admin_reviewer_invite, name="admin-reviewer-invite"),
    path("admin/reviewers/<int:user_id>/invitation/revoke/", admin_views.admin_reviewer_invitation_revoke,
         name="admin-reviewer-invitation-revoke"),
    path("admin/reviewers/<int:user_id>/sessions/<int:session_id>/end/", admin_views.admin_reviewer_session_end,
         name="admin-reviewer-session-end"),
    path("admin/reviewers/<int:user_id>/sign-out-everywhere/", admin_views.admin_reviewer_sign_out_everywhere,
         name="admin-reviewer-sign-out-everywhere"),
    path("admin/reviewers/<int:user_id>/tokens/<int:token_id>/revoke/", admin_views.admin_reviewer_token_revoke,
         name="admin-reviewer-token-revoke"),
    path("admin/pools/<str:pool_id>/disagreements/next/", admin_views.admin_disagreement_next,
         name="admin-disagreement-next"),
    path("admin/pools/<str:pool_id>/guidelines/", admin_views.admin_pool_guidelines, name="admin-pool-guidelines"),
    path("admin/pools/<str:pool_id>/known-answers/", admin_views.admin_known_answers, name="admin-known-answers"),
    path("invitation/<str:uidb64>/<str:token>/", admin_views.reviewer_invitation, name="invitation"),
]
