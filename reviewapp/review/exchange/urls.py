"""Pages of the label exchange, under /review/admin/pools/<pool id>/ (included by reviewapp/review/urls.py)."""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

exchange_views = lazy_module("reviewapp.review.exchange.views")

urlpatterns = [
    path("<str:pool_id>/label-studio-tasks.json", exchange_views.labelstudio_tasks_download,
         name="admin-label-studio-tasks"),
    path("<str:pool_id>/label-studio-config.xml", exchange_views.labelstudio_config_download,
         name="admin-label-studio-config"),
    path("<str:pool_id>/argilla.zip", exchange_views.argilla_download, name="admin-argilla"),
    path("<str:pool_id>/label-imports/", exchange_views.labels_upload, name="admin-label-imports"),
    path("<str:pool_id>/imported-labels.jsonl", exchange_views.imported_labels_download,
         name="admin-imported-labels"),
]
