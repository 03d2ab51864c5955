import socket

from celery import shared_task

from reviewapp.core.job_sweep import jobs_sweep as sweep
from reviewapp.core.models import WorkerHeartbeat


@shared_task(name="reviewapp.worker_ping")
def worker_ping(token: str) -> None:
    WorkerHeartbeat.objects.get_or_create(token=token, defaults={"hostname": socket.gethostname()})


@shared_task(name="reviewapp.jobs_sweep", ignore_result=True)
def jobs_sweep() -> dict:
    """Under celery beat: requeue jobs whose execution is gone, send queued jobs whose message may be lost
    (reviewapp.core.job_sweep.jobs_sweep)."""
    report = sweep()
    return {"requeued": report.requeued, "abandoned": report.abandoned, "skipped": report.skipped,
            "resent": report.resent}
