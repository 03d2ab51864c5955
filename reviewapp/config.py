"""Reading settings from the environment, with errors that name the variable.

Every setting of the product comes from the environment (one settings file, no
per-environment modules). A bad value raises ``ConfigError`` with one line
that names the variable and what to do; ``manage.py`` prints it without a
traceback.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, urlparse

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from dj_database_url import DBConfig


class ConfigError(ImproperlyConfigured):
    """A setting from the environment is missing or malformed (Django's ImproperlyConfigured, one readable line)."""


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    """The variable, else the content of the file named by ``<name>_FILE`` (Docker secrets under /run/secrets/,
    so that a password never sits in the compose file or the container's environment), else ``default``."""
    value = os.environ.get(name)
    if value is not None:
        return value
    path = os.environ.get(f"{name}_FILE")
    if path:
        try:
            return Path(path).read_text().strip()
        except OSError as error:
            raise ConfigError(f"{name}_FILE={path!r} cannot be read ({error.strerror})") from None
    return default


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ConfigError(f"{name}={raw!r} is not a boolean; use 1/0, true/false, yes/no or on/off")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a whole number") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def database_config(url: str, *, base_dir: Path, password: str = "") -> DBConfig:
    """Django DATABASES['default'] from a DATABASE_URL (sqlite:///path or postgres://...); ``password``
    (DATABASE_PASSWORD or DATABASE_PASSWORD_FILE) is used when the URL carries none."""
    scheme = urlparse(url).scheme
    if scheme not in {"sqlite", "postgres", "postgresql", "pgsql"}:
        raise ConfigError(
            f"DATABASE_URL has scheme {scheme or '(none)'!r}; use sqlite:///var/db.sqlite3 "
            "or postgres://user@host:5432/dbname"
        )
    try:
        config = dj_database_url.parse(url, conn_max_age=60 if scheme != "sqlite" else 0)
    except Exception as error:  # the parser raises several types for a malformed URL
        raise ConfigError(
            f"DATABASE_URL could not be parsed ({error}); expected e.g. postgres://user@host:5432/db"
        ) from None
    if scheme == "sqlite":
        name = config.get("NAME") or ""
        if name and name != ":memory:" and not os.path.isabs(name):
            config["NAME"] = str(base_dir / name)
        if config.get("NAME") and config["NAME"] != ":memory:":
            # The embedded default keeps its file under var/; create the folder on first use.
            Path(config["NAME"]).parent.mkdir(parents=True, exist_ok=True)
        config["OPTIONS"] = {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    elif not config.get("NAME"):
        raise ConfigError("DATABASE_URL names no database; expected postgres://user@host:5432/dbname")
    elif password and not config.get("PASSWORD"):
        config["PASSWORD"] = password
    return config


def without_postgres_fields(config: DBConfig) -> None:
    """On SQLite, mark ``django.contrib.postgres.fields`` absent so that importing it fails as if psycopg were not
    installed. DRF's compat module tries it in every process that loads DRF (to map ArrayField and HStoreField in
    model serializers) and, psycopg being installed for PostgreSQL, it succeeds: psycopg and its C extension, about
    0.1 s of CPU and 10 MB per process, for fields no model can have on SQLite. Nothing else imports it."""
    if config["ENGINE"].endswith("sqlite3"):
        sys.modules.setdefault("django.contrib.postgres.fields", None)  # type: ignore[arg-type]


def redis_url(raw: str, *, password: str = "") -> str:
    """REDIS_URL, with ``password`` (REDIS_PASSWORD or REDIS_PASSWORD_FILE) put in when the URL has none."""
    if not raw:
        return ""
    parsed = urlparse(raw)
    if parsed.scheme not in {"redis", "rediss"} or not parsed.hostname:
        raise ConfigError(f"REDIS_URL={raw!r} is not a redis:// URL; expected e.g. redis://127.0.0.1:6379/0")
    if password and not parsed.password:
        netloc = f"{parsed.username or ''}:{quote(password, safe='')}@{parsed.netloc.rpartition('@')[2]}"
        return parsed._replace(netloc=netloc).geturl()
    return raw


# Redis' default configuration has databases 0 to 15.
REDIS_DATABASES = 16


def redis_cache_url(broker_url: str) -> str:
    """The Django cache's Redis URL: REDIS_URL's server, in the database after the broker's (``/0`` -> ``/1``).

    The broker keeps its queues and unacknowledged messages as keys of its database; a database of the cache's own
    keeps a cache flush (``cache.clear()`` is FLUSHDB) from deleting them, and lets an operator inspect or flush
    either one alone. "" when REDIS_URL is unset.
    """
    if not broker_url:
        return ""
    parsed = urlparse(broker_url)
    number = parsed.path.strip("/") or "0"
    if not number.isdigit():
        raise ConfigError(f"REDIS_URL names database {number!r}; expected a number, e.g. redis://127.0.0.1:6379/0")
    cache = int(number) + 1
    if cache >= REDIS_DATABASES:
        raise ConfigError(f"REDIS_URL names database {number}; the cache takes the next one, and Redis has 0 to "
                          f"{REDIS_DATABASES - 1}: name a database below {REDIS_DATABASES - 1}")
    return parsed._replace(path=f"/{cache}").geturl()


def data_dir(raw: str, *, base_dir: Path) -> Path:
    """The folder holding CUAD and the statute pages (read in place, never copied)."""
    if raw:
        path = Path(raw).expanduser()
        return path if path.is_absolute() else (base_dir / path).resolve()
    return (base_dir.parent / "shared" / "data").resolve()
