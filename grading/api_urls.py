from django.urls import path

from grading import api
from grading.audits import api as audit_api

app_name = "cuad-api"
urlpatterns = [
    path("dataset/", api.DatasetApi.as_view(), name="dataset"),
    path("runs/", api.RunsApi.as_view(), name="runs"),
    path("runs/<int:pk>/", api.RunApi.as_view(), name="run"),
    path("jobs/", api.JobsApi.as_view(), name="jobs"),
    path("jobs/<int:pk>/", api.JobApi.as_view(), name="job"),
    path("scorecard/", api.ScorecardApi.as_view(), name="scorecard"),
    path("explorer/", api.ExplorerApi.as_view(), name="explorer"),
    path("playground/", api.PlaygroundApi.as_view(), name="playground"),
    path("audits/", audit_api.AuditsApi.as_view(), name="audits"),
    path("audits/<int:pk>/", audit_api.AuditApi.as_view(), name="audit"),
]
