"""A task goes through the broker to a worker and writes to the database."""

import uuid

from django.db import transaction

from reviewapp.core.models import WorkerHeartbeat
from reviewapp.core.tasks import worker_ping
from tests.helpers import wait_until


def test_a_queued_task_is_executed_by_the_worker(celery_worker):
    token = uuid.uuid4().hex
    with transaction.atomic():
        transaction.on_commit(lambda: worker_ping.delay(token))
    assert wait_until(lambda: WorkerHeartbeat.objects.filter(token=token).exists(), timeout=60)
