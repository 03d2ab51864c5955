"""The CUAD console under /cuad/ (login required; reviewers get 403)."""

from django.urls import path

from grading import views
from grading.audits import views as audit_views

app_name = "cuad"
urlpatterns = [
    path("", views.home, name="home"),
    path("dataset/", views.dataset, name="dataset"),
    path("runs/", views.runs, name="runs"),
    path("runs/launch/", views.launch, name="launch"),
    path("runs/<int:pk>/", views.run_detail, name="run"),
    path("jobs/<int:pk>/", views.job_detail, name="job"),
    path("jobs/<int:pk>/progress/", views.job_progress, name="job-progress"),
    path("jobs/<int:pk>/resume/", views.job_resume, name="job-resume"),
    path("scorecard/", views.scorecard, name="scorecard"),
    path("explorer/", views.explorer, name="explorer"),
    path("playground/", views.playground, name="playground"),
    path("audits/", audit_views.audits, name="audits"),
    path("audits/<int:pk>/", audit_views.audit_detail, name="audit"),
    path("audits/<int:pk>/progress/", audit_views.audit_progress, name="audit-progress"),
    path("audits/<int:pk>/resume/", audit_views.audit_resume, name="audit-resume"),
    path("audits/<int:pk>/review/", audit_views.audit_review, name="audit-review"),
]
