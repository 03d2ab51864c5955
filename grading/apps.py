from django.apps import AppConfig


class GradingConfig(AppConfig):
    name = "grading"
    verbose_name = "CUAD clause-extraction grader"
    product_data = True

    def ready(self) -> None:
        # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
        from grading.audits.kinds import CLAUSE_KIND
        from grading.contracts.kinds import CONTRACT_CLAUSE_KIND
        from grading.job_kinds import AUDIT_JOB, EXTRACTION_JOB
        from reviewapp.core.jobs import job_kind_register
        from reviewapp.review.kinds import kind_register

        kind_register(CLAUSE_KIND)
        kind_register(CONTRACT_CLAUSE_KIND)

        job_kind_register(EXTRACTION_JOB)
        job_kind_register(AUDIT_JOB)

    def demo_load(self, *, data_dir, stdout) -> None:
        # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
        from grading.demo import load_demo

        load_demo(data_dir=data_dir, stdout=stdout)

