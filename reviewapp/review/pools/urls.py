"""Admin pages of pools, under /review/pools/ (included by reviewapp/review/urls.py, namespace "review").

The list and a pool's page lived under /review/admin/ before; those paths answer with a permanent redirect.
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module
from reviewapp.core.http.moved import moved

views = lazy_module("reviewapp.review.pools.views")

urlpatterns = [
    path("pools/", views.admin_pools, name="pools"),
    path("pools/new/", views.admin_pool_new, name="pool-new"),
    path("pools/<str:pool_id>/", views.admin_pool, name="pool"),
    path("pools/<str:pool_id>/new-version/", views.admin_pool_new_version, name="pool-new-version"),
    path("pools/<str:pool_id>/guidelines/", views.admin_pool_guidelines, name="pool-guidelines"),
    path("pools/<str:pool_id>/known-answers/", views.admin_known_answers, name="pool-known-answers"),
    moved("admin/", "review:pools"),
    moved("admin/pools/<str:pool_id>/", "review:pool"),
]
