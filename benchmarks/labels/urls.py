"""Human labels of a rerank run: label metrics, calibration, declaring a review pool.

Under labels/rerank/<pk>/ (as reports/rerank/<pk>/): the pages read one rerank run's human labels. They lived
under the run's own rerank/<pk>/ before; those paths answer with a permanent redirect.

Included by benchmarks/urls.py (namespace "benchmarks").
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module
from reviewapp.core.http.moved import moved

views = lazy_module("benchmarks.labels.views")

urlpatterns = [
    path("labels/rerank/<int:pk>/human-metrics/", views.human_metrics_page, name="rerank-human-metrics"),
    path("labels/rerank/<int:pk>/human-metrics/<str:export>", views.human_metrics_export,
         name="rerank-human-metrics-export"),
    path("labels/rerank/<int:pk>/calibration/", views.calibration_page, name="rerank-calibration"),
    path("labels/rerank/<int:pk>/calibration/<str:export>", views.calibration_export,
         name="rerank-calibration-export"),
    path("labels/rerank/<int:pk>/review-pool/", views.review_pool_declare_view, name="rerank-review-pool"),
    moved("rerank/<int:pk>/human-metrics/", "benchmarks:rerank-human-metrics"),
    moved("rerank/<int:pk>/human-metrics/<str:export>", "benchmarks:rerank-human-metrics-export"),
    moved("rerank/<int:pk>/calibration/", "benchmarks:rerank-calibration"),
    moved("rerank/<int:pk>/calibration/<str:export>", "benchmarks:rerank-calibration-export"),
    moved("rerank/<int:pk>/review-pool/", "benchmarks:rerank-review-pool"),
]
