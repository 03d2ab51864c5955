"""Pages of people, under /review/people/ (included by reviewapp/review/urls.py, namespace "review").

Reviewer accounts (tokens, invitation, sessions), workload and reassignment are admin pages; the invitation a
reviewer follows is /review/people/invitation/. Those that lived under /review/pools/ and /review/people/invitation/
before (invitation links already sent among them) answer there with a permanent redirect.
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module
from reviewapp.core.http.moved import moved

views = lazy_module("reviewapp.review.people.views")

urlpatterns = [
    path("people/reviewers/", views.admin_reviewers, name="reviewers"),
    path("people/reviewers/<int:user_id>/", views.admin_reviewer, name="reviewer"),
    path("people/reviewers/<int:user_id>/active/", views.admin_reviewer_active, name="reviewer-active"),
    path("people/reviewers/<int:user_id>/invite/", views.admin_reviewer_invite, name="reviewer-invite"),
    path("people/reviewers/<int:user_id>/invitation/revoke/", views.admin_reviewer_invitation_revoke,
         name="reviewer-invitation-revoke"),
    path("people/reviewers/<int:user_id>/sessions/<int:session_id>/end/", views.admin_reviewer_session_end,
         name="reviewer-session-end"),
    path("people/reviewers/<int:user_id>/sign-out-everywhere/", views.admin_reviewer_sign_out_everywhere,
         name="reviewer-sign-out-everywhere"),
    path("people/reviewers/<int:user_id>/tokens/<int:token_id>/revoke/", views.admin_reviewer_token_revoke,
         name="reviewer-token-revoke"),
    path("people/workload/", views.admin_workload, name="workload"),
    path("people/workload/time.csv", views.admin_workload_time_csv, name="workload-time-csv"),
    path("people/workload/reassign/", views.admin_workload_reassign, name="workload-reassign"),
    path("people/invitation/<str:uidb64>/<str:token>/", views.reviewer_invitation, name="invitation"),
    moved("admin/reviewers/", "review:reviewers"),
    moved("admin/workload/", "review:workload"),
    moved("admin/workload/time.csv", "review:workload-time-csv"),
    moved("invitation/<str:uidb64>/<str:token>/", "review:invitation"),
]
