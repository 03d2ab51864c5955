from django.urls import path

from benchmarks.rerank.urls import urlpatterns as _rerank_urlpatterns
from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("benchmarks.views")
comparison_views = lazy_module("benchmarks.comparisons.views")
corpus_views = lazy_module("benchmarks.corpus.views")
views_human = lazy_module("benchmarks.labels.views")
report_views = lazy_module("benchmarks.reports.views")
retrieval_views = lazy_module("benchmarks.retrieval.views")
snapshot_views = lazy_module("benchmarks.snapshots.views")
suite_views = lazy_module("benchmarks.suites.views")

app_name = "benchmarks"
urlpatterns = [
    path("", views.index, name="index"),
    path("corpora/import/", corpus_views.corpus_import, name="corpus-import"),
    path("corpus/<str:corpus>/", corpus_views.corpus_detail, name="corpus"),
    # path: US Code chapter ids contain "/" (title 1, chapter 1 is "1/1").
    path("corpus/<str:corpus>/chapter/<path:chapter>/", corpus_views.chapter_detail, name="chapter"),
    path("provisions/<int:pk>/", corpus_views.provision_detail, name="provision"),
    path("snapshots/<int:pk>/changes/", snapshot_views.snapshot_changes, name="snapshot-changes"),
    path("suites/<int:pk>/", suite_views.suite_detail, name="suite"),
    path("suites/<int:pk>/export/<str:fmt>", suite_views.suite_export, name="suite-export"),
    path("suites/<int:pk>/new-version/", suite_views.suite_new_version, name="suite-new-version"),
    path("retrieval/new/", retrieval_views.retrieval_run_new, name="retrieval-run-new"),
    path("retrieval/<int:pk>/", retrieval_views.retrieval_run_detail, name="retrieval-run"),
]

# Rerank runs: their own URL module (benchmarks.rerank.urls), same namespace.

urlpatterns += _rerank_urlpatterns

# Benchmark reports of a retrieval or rerank run: the index, the page and its exports.

urlpatterns += [
    path("reports/", report_views.report_index, name="reports"),
    path("reports/rerank/<int:pk>/", report_views.report_page, {"source": "rerank"}, name="report-rerank"),
    path("reports/rerank/<int:pk>/<str:export>", report_views.report_export, {"source": "rerank"},
         name="report-rerank-export"),
    path("reports/retrieval/<int:pk>/", report_views.report_page, {"source": "retrieval"}, name="report-retrieval"),
    path("reports/retrieval/<int:pk>/<str:export>", report_views.report_export, {"source": "retrieval"},
         name="report-retrieval-export"),
]

# Statute leaderboards: every rerank run of one retrieval run against keyword order, and their exports.

urlpatterns += [
    path("reports/leaderboard/", report_views.leaderboard_index, name="leaderboards"),
    path("reports/leaderboard/<int:pk>/", report_views.leaderboard_page, name="leaderboard"),
    path("reports/leaderboard/<int:pk>/<str:export>", report_views.leaderboard_export, name="leaderboard-export"),
]

# The one page to send: a leaderboard's verdict, figures, confirmations, caveats and exposure, as HTML and PDF.

urlpatterns += [
    path("reports/summary/<int:pk>/", report_views.summary_page, name="summary"),
    path("reports/summary/<int:pk>/summary.pdf", report_views.summary_pdf, name="summary-pdf"),
]

# Comparisons planned together: declared before any of their held-out figures exist (one look at the split).

urlpatterns += [
    path("comparisons/", comparison_views.comparison_index, name="comparisons"),
    path("comparisons/declare/<int:pk>/", comparison_views.comparison_declare_view, name="comparison-declare"),
]

# Human labels of a rerank run: label metrics, calibration, and declaring a review pool.

urlpatterns += [
    path("rerank/<int:pk>/human-metrics/", views_human.human_metrics_page, name="rerank-human-metrics"),
    path("rerank/<int:pk>/human-metrics/<str:export>", views_human.human_metrics_export,
         name="rerank-human-metrics-export"),
    path("rerank/<int:pk>/calibration/", views_human.calibration_page, name="rerank-calibration"),
    path("rerank/<int:pk>/calibration/<str:export>", views_human.calibration_export, name="rerank-calibration-export"),
    path("rerank/<int:pk>/review-pool/", views_human.review_pool_declare_view, name="rerank-review-pool"),
]

# The suite workbench: drafts written, checked and frozen in the browser.

urlpatterns += [
    path("suites/workbench/", suite_views.workbench_index, name="workbench"),
    path("suites/workbench/import/", suite_views.workbench_import, name="workbench-import"),
    path("suites/workbench/<int:pk>/", suite_views.workbench_draft, name="workbench-draft"),
    path("suites/workbench/<int:pk>/edit/", suite_views.workbench_edit, name="workbench-edit"),
    path("suites/workbench/<int:pk>/search/", suite_views.workbench_search, name="workbench-search"),
    path("suites/workbench/<int:pk>/provisions/<int:provision_pk>/", suite_views.workbench_provision,
         name="workbench-provision"),
    path("suites/workbench/<int:pk>/freeze/", suite_views.workbench_freeze, name="workbench-freeze"),
    path("suites/confirmation/items/<str:item_id>/propose/", suite_views.confirmation_propose,
         name="confirmation-propose"),
    path("suites/<int:pk>/confirmation/declare/", suite_views.confirmation_declare, name="confirmation-declare"),
    path("suites/<int:pk>/confirmation/new-version/", suite_views.confirmation_new_version,
         name="confirmation-new-version"),
]
