import socket

from reviewapp.celery import app


@app.task(name="reviewapp.worker_ping")
def worker_ping(token: str) -> None:
    from reviewapp.core.models import WorkerHeartbeat

    WorkerHeartbeat.objects.get_or_create(token=token, defaults={"hostname": socket.gethostname()})
