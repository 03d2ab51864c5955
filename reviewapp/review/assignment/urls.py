"""Admin actions on who holds a pool's items, under /review/assignment/<pool id>/ (included by
reviewapp/review/urls.py, namespace "review"). Each answers a POST from the pool's page (mixing: from its
known-answer page) and sends the admin back.
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("reviewapp.review.assignment.views")

urlpatterns = [
    path("assignment/<str:pool_id>/assign/", views.admin_pool_assign, name="assign"),
    path("assignment/<str:pool_id>/unassign/", views.admin_pool_unassign, name="unassign"),
    path("assignment/<str:pool_id>/reassign/", views.admin_pool_reassign, name="reassign"),
    path("assignment/<str:pool_id>/known-answers/mix/", views.admin_known_answer_mix, name="known-answers-mix"),
]
