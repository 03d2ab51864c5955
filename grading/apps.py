from django.apps import AppConfig


class GradingConfig(AppConfig):
    name = "grading"
    verbose_name = "CUAD clause-extraction grader"

    def ready(self) -> None:
        # The console's job tables live in their own module (grading/models.py holds the grader's tables).
        from grading import audit_models, console_models  # noqa: F401
