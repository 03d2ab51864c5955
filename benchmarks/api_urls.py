from django.urls import path

from benchmarks.comparisons.api import ComparisonsApi
from benchmarks.corpus.api import ProvisionDetail, ProvisionList, SnapshotList
from benchmarks.labels.api import CalibrationApi, HumanMetricsApi, ReviewPoolListApi, ReviewPoolPlanApi
from benchmarks.reports.api import (
    RerankReportApi,
    RerankReportTrecApi,
    RetrievalReportApi,
    RetrievalReportTrecApi,
    StatuteLeaderboardApi,
)
from benchmarks.rerank.api import RerankRunApi, RerankRunLaunchApi
from benchmarks.retrieval.api import RunDetail, RunList
from benchmarks.suites.api import SuiteDetail, SuiteExport, SuiteList

app_name = "benchmarks-api"
urlpatterns = [
    path("snapshots/", SnapshotList.as_view(), name="snapshots"),
    path("provisions/", ProvisionList.as_view(), name="provisions"),
    path("provisions/<int:pk>/", ProvisionDetail.as_view(), name="provision"),
    path("suites/", SuiteList.as_view(), name="suites"),
    path("suites/<int:pk>/", SuiteDetail.as_view(), name="suite"),
    path("suites/<int:pk>/export/<str:fmt>", SuiteExport.as_view(), name="suite-export"),
    path("retrieval-runs/", RunList.as_view(), name="retrieval-runs"),
    path("retrieval-runs/<int:pk>/", RunDetail.as_view(), name="retrieval-run"),
]

# Rerank runs.

urlpatterns += [
    path("rerank-runs/", RerankRunLaunchApi.as_view(), name="rerank-runs"),
    path("rerank-runs/<int:pk>/", RerankRunApi.as_view(), name="rerank-run"),
]

# Benchmark reports of a retrieval or rerank run.

urlpatterns += [
    path("reports/rerank/<int:pk>/", RerankReportApi.as_view(), name="report-rerank"),
    path("reports/retrieval/<int:pk>/", RetrievalReportApi.as_view(), name="report-retrieval"),
    path("reports/rerank/<int:pk>/trec/<str:export>", RerankReportTrecApi.as_view(), name="report-rerank-trec"),
    path("reports/retrieval/<int:pk>/trec/<str:export>", RetrievalReportTrecApi.as_view(),
         name="report-retrieval-trec"),
    path("reports/leaderboard/<int:pk>/", StatuteLeaderboardApi.as_view(), name="leaderboard"),
]

# Comparisons planned together on a suite's held-out split (one look for the held-out ledger).

urlpatterns += [
    path("comparisons/", ComparisonsApi.as_view(), name="comparisons"),
]

# Human labels of a rerank run: label metrics, calibration, its review pools.

urlpatterns += [
    path("rerank-runs/<int:pk>/human-metrics/", HumanMetricsApi.as_view(), name="rerank-human-metrics"),
    path("rerank-runs/<int:pk>/calibration/", CalibrationApi.as_view(), name="rerank-calibration"),
    path("rerank-runs/<int:pk>/review-pools/", ReviewPoolListApi.as_view(), name="rerank-review-pools"),
    path("rerank-runs/<int:pk>/review-pool-plan/", ReviewPoolPlanApi.as_view(), name="rerank-review-pool-plan"),
]
