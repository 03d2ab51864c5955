"""Dependency checks shared by /healthz and ``manage.py preflight``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection
from kombu.exceptions import OperationalError as BrokerError


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
        # local import: the embedded setup runs without Redis, and its client costs ~0.25 s to import
        import redis

        try:
            client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
            client.ping()
        except Exception as error:  # connection refused, timeout, auth: all mean "down"
            return Check("broker", False, f"redis: {error}")
        return Check("broker", True, "redis")
    folder = Path(str(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"]))
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


class BrokerUnavailable(BrokerError):
    """The task broker cannot be reached, found before anything was saved (``reviewapp.core.jobs.job_enqueue``)."""


def broker_require(what: str) -> None:
    """Raise ``BrokerUnavailable`` naming ``what`` was refused when the broker does not answer now."""
    check = check_broker()
    if not check.ok:
        raise BrokerUnavailable(f"the task broker is unreachable ({check.detail}); {what}")


def _outage_classes() -> tuple[type[BaseException], ...]:
    classes: list[type[BaseException]] = [OperationalError, InterfaceError, BrokerError]
    try:
        # local import: the embedded setup runs without Redis, and its client costs ~0.25 s to import
        import redis
    except ImportError:  # the embedded setup runs without the redis client
        pass
    else:
        classes += [redis.exceptions.ConnectionError, redis.exceptions.TimeoutError]
    return tuple(classes)


def _outage_in(error: BaseException) -> BaseException | None:
    classes = _outage_classes()
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, classes):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def is_outage(error: BaseException) -> bool:
    """True when ``error`` (or what caused it) is a lost database or broker/cache connection: a dependency is down
    or restarting, which interrupts the work at hand but says nothing against it. Everything else is the work's
    own error."""
    return _outage_in(error) is not None


def outage_reason(error: BaseException) -> str:
    """One line naming the dependency that is down, for a 503 answer and a job's log."""
    error = _outage_in(error) or error
    if isinstance(error, BrokerUnavailable):
        return str(error)
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if isinstance(error, BrokerError) or "redis" in type(error).__module__:
        what = "the task broker / shared cache (Redis)" if settings.REDIS_URL else "the task broker"
    else:
        what = "the database"
    return f"{what} is unreachable ({type(error).__name__}: {text[:200]})"
