"""The CUAD console's JSON API under /api/v1/cuad/ (reviewers get 403)."""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

audits_api = lazy_module("grading.audits.api")
comparisons_api = lazy_module("grading.comparisons.api")
contracts_api = lazy_module("grading.contracts.api")
gold_api = lazy_module("grading.contracts.gold.api")
dataset_api = lazy_module("grading.dataset.api")
runs_api = lazy_module("grading.runs.api")
scorecard_api = lazy_module("grading.scorecard.api")


app_name = "cuad-api"
urlpatterns = [
    path("dataset/", dataset_api.DatasetApi.as_view(), name="dataset"),
    path("runs/", runs_api.RunsApi.as_view(), name="runs"),
    path("runs/<int:pk>/", runs_api.RunApi.as_view(), name="run"),
    path("jobs/", runs_api.JobsApi.as_view(), name="jobs"),
    path("jobs/<int:pk>/", runs_api.JobApi.as_view(), name="job"),
    path("scorecard/", scorecard_api.ScorecardApi.as_view(), name="scorecard"),
    path("leaderboard/", scorecard_api.LeaderboardApi.as_view(), name="leaderboard"),
    path("comparisons/", comparisons_api.CuadComparisonsApi.as_view(), name="comparisons"),
    path("explorer/", scorecard_api.ExplorerApi.as_view(), name="explorer"),
    path("playground/", scorecard_api.PlaygroundApi.as_view(), name="playground"),
    path("contract-sets/", contracts_api.ContractSetsApi.as_view(), name="contract-sets"),
    path("contract-sets/<int:pk>/", contracts_api.ContractSetApi.as_view(), name="contract-set"),
    path("contract-sets/<int:pk>/contracts/", contracts_api.ContractUploadApi.as_view(), name="contract-upload"),
    path("contract-sets/<int:pk>/taxonomy/", contracts_api.TaxonomyApi.as_view(), name="contract-taxonomy"),
    path("contract-sets/<int:pk>/gold-sets/", gold_api.GoldSetsApi.as_view(), name="gold-sets"),
    path("contract-sets/<int:pk>/gold-sets/<int:version>/", gold_api.GoldSetApi.as_view(), name="gold-set"),
    path("contract-sets/<int:pk>/gold-sets/<int:version>/cuad.json", gold_api.GoldSetExportApi.as_view(),
         {"fmt": "json"}, name="gold-set-cuad"),
    path("contract-sets/<int:pk>/gold-sets/<int:version>/gold.csv", gold_api.GoldSetExportApi.as_view(),
         {"fmt": "csv"}, name="gold-set-csv"),
    path("audits/", audits_api.AuditsApi.as_view(), name="audits"),
    path("audits/<int:pk>/", audits_api.AuditApi.as_view(), name="audit"),
]
