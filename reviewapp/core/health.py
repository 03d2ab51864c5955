"""Dependency checks shared by /healthz and ``manage.py preflight``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connection


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def check_database() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:  # any driver error means "down"; the detail says which
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return Check("database", False, f"{connection.vendor}: {first_line}")
    return Check("database", True, connection.vendor)


def check_broker() -> Check:
    if settings.REDIS_URL:
        import redis

        try:
            client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
            client.ping()
        except Exception as error:  # connection refused, timeout, auth: all mean "down"
            return Check("broker", False, f"redis: {error}")
        return Check("broker", True, "redis")
    folder = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".healthz"
        probe.write_text("ok")
        probe.unlink()
    except OSError as error:
        return Check("broker", False, f"filesystem: {error}")
    return Check("broker", True, "filesystem")


def check_data_dir() -> Check:
    path = Path(settings.DATA_DIR)
    if not path.is_dir():
        return Check("data_dir", False, f"{path} does not exist")
    return Check("data_dir", True, str(path))
