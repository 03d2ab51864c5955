"""The statute benchmark under /benchmarks/: each feature's URLs live in its own folder's urls.py, one namespace.

The order below is the order Django tries them in; no two features' patterns match the same path. Each feature's
paths begin with its folder's name (corpus/, snapshots/, suites/, retrieval/, rerank/, reports/, comparisons/,
labels/); a page that lived elsewhere before keeps its old path as a permanent redirect (core/http/moved.py).
"""

from django.urls import path

from benchmarks.comparisons.urls import urlpatterns as _comparisons
from benchmarks.corpus.urls import urlpatterns as _corpus
from benchmarks.labels.urls import urlpatterns as _labels
from benchmarks.reports.urls import urlpatterns as _reports
from benchmarks.rerank.urls import urlpatterns as _rerank
from benchmarks.retrieval.urls import urlpatterns as _retrieval
from benchmarks.snapshots.urls import urlpatterns as _snapshots
from benchmarks.suites.urls import urlpatterns as _suites
from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("benchmarks.views")

app_name = "benchmarks"
urlpatterns = [
    path("", views.index, name="index"),
    *_corpus,
    *_snapshots,
    *_suites,
    *_retrieval,
    *_rerank,
    *_reports,
    *_comparisons,
    *_labels,
]
