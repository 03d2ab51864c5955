from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "reviewapp.jobs"
    label = "jobs"
    verbose_name = "Job controls"
