"""Quiet logs: an expected 403 or 404 is one line without a traceback; the demo's worker starts without warnings."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading

import pytest
from django.conf import settings

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.django_db


def _formatted(record: logging.LogRecord) -> str:
    fmt = settings.LOGGING["formatters"]["plain"]["format"]
    return logging.Formatter(fmt).format(record)


@pytest.mark.parametrize(("who", "path", "status"), [("reviewer", "/benchmarks/", 403),
                                                     ("reviewer", "/no-such-page/", 404),
                                                     ("stakeholder", "/cuad/runs/999999/", 404)])
def test_an_expected_refusal_is_one_log_line_without_a_traceback(who, path, status, caplog, reviewer_client,
                                                                 stakeholder_client):
    client = reviewer_client if who == "reviewer" else stakeholder_client
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client.get(path)
    assert response.status_code == status
    records = [r for r in caplog.records if r.name == "django.request"]
    assert len(records) == 1, [r.getMessage() for r in records]
    line = _formatted(records[0])
    assert records[0].exc_info is None
    assert "\n" not in line and "Traceback" not in line, line
    assert path in line


def test_a_server_error_keeps_its_traceback(caplog):
    """The filter is for expected refusals only: a 500 is still logged with its exception."""
    from reviewapp.core.http.log_filters import ExpectedRefusalOneLine

    try:
        raise RuntimeError("boom")
    except RuntimeError:
        record = logging.getLogger("django.request").makeRecord(
            "django.request", logging.ERROR, __file__, 1, "Internal Server Error: /x", (), sys.exc_info())
    record.status_code = 500
    assert ExpectedRefusalOneLine().filter(record)
    assert record.exc_info is not None
    assert "Traceback" in _formatted(record)


@pytest.mark.slow  # starts a real Celery worker
def test_the_demo_worker_starts_without_a_warning(tmp_path):
    """scripts/demo.sh's worker on the embedded defaults (filesystem broker, SQLite), until it is ready."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL", "CELERY_QUEUE")}
    env.update({"VAR_DIR": str(tmp_path), "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "DEBUG": "1",
                "CELERY_TASK_ALWAYS_EAGER": "0"})
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "reviewapp", "worker", "--pool=solo", "--loglevel=INFO",
         "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        for line in process.stdout:
            lines.append(line.rstrip())
            if " ready." in line:
                ready.set()
        ready.set()  # the worker exited

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        ready.wait(120)  # a safety net so a hung worker cannot hang the suite; not a timing check
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        reader.join(timeout=10)
    output = "\n".join(lines)
    assert any(" ready." in line for line in lines), "the worker never said it was ready:\n" + output[-3000:]
    assert "No hostname was supplied" not in output, output[-3000:]
    # Celery's warning about running as root is about this machine's user, not the demo's configuration.
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    warnings = [line for line in lines if ("WARNING" in line or "Warning" in line)
                and not (as_root and "superuser privileges" in line)]
    assert not warnings, "\n".join(warnings)
