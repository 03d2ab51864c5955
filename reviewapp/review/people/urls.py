"""Pages of people and reliability, under /review/ (included by reviewapp/review/urls.py, same namespace).

Workload and reassignment, a reviewer's account (tokens, invitation, sessions), the walk through open
disagreements, a pool's guidelines and known answers are admin pages under /review/admin/; the invitation a
reviewer follows is /review/invitation/.
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

admin_views = lazy_module("reviewapp.review.people.views")

urlpatterns = [
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
