from django.apps import AppConfig


class GradingConfig(AppConfig):
    name = "grading"
    verbose_name = "CUAD clause-extraction grader"
    product_data = True

    def ready(self) -> None:
        # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
        from grading.audits.kinds import CLAUSE_KIND
        from grading.audits.models import Audit
        from grading.contracts.kinds import CONTRACT_CLAUSE_KIND
        from grading.runs.models import ConsoleJob
        from reviewapp.core.jobs import job_kind_register
        from reviewapp.review.kinds import kind_register

        kind_register(CLAUSE_KIND)
        kind_register(CONTRACT_CLAUSE_KIND)
        job_kind_register(model=ConsoleJob, resume=_job_resume_stale, task=_job_task)
        job_kind_register(model=Audit, resume=_audit_resume_stale, task="grading.audits.tasks.audit_run")

    def demo_load(self, *, data_dir, stdout) -> None:
        # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
        from grading.demo import load_demo

        load_demo(data_dir=data_dir, stdout=stdout)


def _job_task(job) -> str:
    return f"grading.runs.tasks.{'extract_run' if job.kind == 'extract' else 'grade_run'}"


# The sweeper's takeovers of a job whose heartbeat is stale (never a re-attempt of paid requests).
def _job_resume_stale(job) -> None:
    # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
    from grading.runs.jobs import job_resume

    job_resume(job=job, worker_lost=True, only_if_stale=True)


def _audit_resume_stale(audit) -> None:
    # local import: an app's models and what imports them load once the app registry is ready, not with apps.py
    from grading.audits.services import audit_resume

    audit_resume(audit=audit, worker_lost=True, only_if_stale=True)
