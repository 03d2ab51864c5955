"""The CUAD console under /cuad/ (login required; reviewers get 403)."""

from django.urls import path

from grading import views

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
]
