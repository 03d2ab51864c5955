"""The reviewer's pages, under /review/workspace/ (included by reviewapp/review/urls.py, namespace "review").

They lived at /review/ and /review/items/<id>/ before; those paths answer with a permanent redirect, so the links
in notices already sent and reviewers' bookmarks keep working.
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module
from reviewapp.core.http.moved import moved

views = lazy_module("reviewapp.review.workspace.views")

urlpatterns = [
    path("workspace/", views.queue, name="queue"),
    path("workspace/items/<str:item_id>/", views.item, name="item"),
    path("workspace/items/<str:item_id>/history/", views.history, name="history"),
    moved("", "review:queue"),
    moved("items/<str:item_id>/", "review:item"),
    moved("items/<str:item_id>/history/", "review:history"),
]
