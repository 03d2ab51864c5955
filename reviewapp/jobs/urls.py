"""Every job kind's resume form and progress fragment: /jobs/<kind>/<pk>/resume/ and /jobs/<kind>/<pk>/progress/."""

from django.urls import path

from reviewapp.core.http.lazy_views import lazy_module

views = lazy_module("reviewapp.jobs.views")

app_name = "jobs"

urlpatterns = [
    path("<slug:kind>/<int:pk>/resume/", views.job_resume, name="resume"),
    path("<slug:kind>/<int:pk>/progress/", views.job_progress, name="progress"),
]
