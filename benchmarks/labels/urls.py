"""Human labels of a rerank run: label metrics, calibration, declaring a review pool.

Under the run's rerank/<pk>/ prefix: the pages read one rerank run.

Included by benchmarks/urls.py (namespace "benchmarks").
"""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("benchmarks.labels.views")

urlpatterns = [
    path("rerank/<int:pk>/human-metrics/", views.human_metrics_page, name="rerank-human-metrics"),
    path("rerank/<int:pk>/human-metrics/<str:export>", views.human_metrics_export,
         name="rerank-human-metrics-export"),
    path("rerank/<int:pk>/calibration/", views.calibration_page, name="rerank-calibration"),
    path("rerank/<int:pk>/calibration/<str:export>", views.calibration_export, name="rerank-calibration-export"),
    path("rerank/<int:pk>/review-pool/", views.review_pool_declare_view, name="rerank-review-pool"),
]
