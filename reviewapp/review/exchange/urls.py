"""Pages of the label exchange, under /review/exchange/ (included by reviewapp/review/urls.py, namespace "review"):
a pool's downloads for Label Studio and Argilla and the upload of their files, and imported label sources.

The downloads lived under /review/admin/pools/<pool id>/ before; scripts that fetch them there get a permanent
redirect."""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module
from reviewapp.core.http.moved import moved

views = lazy_module("reviewapp.review.exchange.views")

urlpatterns = [
    path("exchange/labels/import/", views.admin_label_import, name="label-import"),
    path("exchange/<str:pool_id>/label-studio-tasks.json", views.labelstudio_tasks_download,
         name="label-studio-tasks"),
    path("exchange/<str:pool_id>/label-studio-config.xml", views.labelstudio_config_download,
         name="label-studio-config"),
    path("exchange/<str:pool_id>/argilla.zip", views.argilla_download, name="argilla"),
    path("exchange/<str:pool_id>/label-imports/", views.labels_upload, name="label-imports"),
    path("exchange/<str:pool_id>/imported-labels.jsonl", views.imported_labels_download, name="imported-labels"),
    moved("admin/pools/<str:pool_id>/label-studio-tasks.json", "review:label-studio-tasks"),
    moved("admin/pools/<str:pool_id>/label-studio-config.xml", "review:label-studio-config"),
    moved("admin/pools/<str:pool_id>/argilla.zip", "review:argilla"),
    moved("admin/pools/<str:pool_id>/imported-labels.jsonl", "review:imported-labels"),
]
