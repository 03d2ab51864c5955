from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

ComparisonsApi = lazy_module("benchmarks.comparisons.api").ComparisonsApi
ProvisionDetail = lazy_module("benchmarks.corpus.api").ProvisionDetail
ProvisionList = lazy_module("benchmarks.corpus.api").ProvisionList
SnapshotList = lazy_module("benchmarks.corpus.api").SnapshotList
CalibrationApi = lazy_module("benchmarks.labels.api").CalibrationApi
HumanMetricsApi = lazy_module("benchmarks.labels.api").HumanMetricsApi
ReviewPoolListApi = lazy_module("benchmarks.labels.api").ReviewPoolListApi
ReviewPoolPlanApi = lazy_module("benchmarks.labels.api").ReviewPoolPlanApi
RerankReportApi = lazy_module("benchmarks.reports.api").RerankReportApi
RerankReportTrecApi = lazy_module("benchmarks.reports.api").RerankReportTrecApi
RetrievalReportApi = lazy_module("benchmarks.reports.api").RetrievalReportApi
RetrievalReportTrecApi = lazy_module("benchmarks.reports.api").RetrievalReportTrecApi
StatuteLeaderboardApi = lazy_module("benchmarks.reports.api").StatuteLeaderboardApi
RerankRunApi = lazy_module("benchmarks.rerank.api").RerankRunApi
RerankRunLaunchApi = lazy_module("benchmarks.rerank.api").RerankRunLaunchApi
RunDetail = lazy_module("benchmarks.retrieval.api").RunDetail
RunList = lazy_module("benchmarks.retrieval.api").RunList
SnapshotChangesApi = lazy_module("benchmarks.snapshots.api").SnapshotChangesApi
SuiteDetail = lazy_module("benchmarks.suites.api").SuiteDetail
SuiteExport = lazy_module("benchmarks.suites.api").SuiteExport
SuiteList = lazy_module("benchmarks.suites.api").SuiteList

app_name = "benchmarks-api"
urlpatterns = [
    path("snapshots/", SnapshotList.as_view(), name="snapshots"),
    path("snapshots/<int:pk>/changes/", SnapshotChangesApi.as_view(), name="snapshot-changes"),
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
