"""Configuration from the environment: clear one-line errors, deploy checks."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    # The suite's own switches must not leak into the command under test.
    dropped = {"DATABASE_URL", "REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    full_env = {k: v for k, v in os.environ.items() if k not in dropped}
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=full_env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow  # runs manage.py in a fresh process
def test_a_malformed_database_url_is_one_line_naming_the_variable():
    result = run_manage("check", DATABASE_URL="mysql://nobody@nowhere/db")
    assert result.returncode == 2
    assert "DATABASE_URL" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.slow  # runs manage.py in a fresh process
def test_an_unreachable_database_is_one_line_naming_the_variable():
    result = run_manage("migrate", "--check", DATABASE_URL="postgres://postgres@127.0.0.1:1/nothing")
    assert result.returncode == 2
    assert "DATABASE_URL" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow  # runs manage.py in a fresh process
def test_a_malformed_redis_url_is_one_line_naming_the_variable():
    result = run_manage("check", REDIS_URL="http://127.0.0.1:6379")
    assert result.returncode == 2
    assert "REDIS_URL" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow  # runs manage.py in a fresh process
def test_preflight_names_an_unreachable_redis_and_a_missing_data_dir(tmp_path):
    result = run_manage(
        "preflight", REDIS_URL="redis://127.0.0.1:1/0", DATA_DIR=str(tmp_path / "absent"),
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
    )
    assert result.returncode != 0
    assert "broker is down" in result.stderr and "REDIS_URL" in result.stderr
    assert "data_dir is down" in result.stderr and "DATA_DIR" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow  # runs manage.py in a fresh process
def test_production_settings_pass_check_deploy_with_no_warnings(tmp_path):
    result = run_manage(
        "check", "--deploy", "--fail-level", "WARNING",
        PRODUCTION="1", DEBUG="0", REQUIRE_SECRET_KEY="1",
        SECRET_KEY="x" * 20 + "-a-long-random-production-secret-for-the-deploy-check-0123456789",
        ALLOWED_HOSTS="eval.example.org", DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        REDIS_URL="redis://127.0.0.1:6379/13",  # PRODUCTION=1 needs a shared cache; the check does not connect
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.slow  # runs manage.py in a fresh process
def test_production_refuses_to_start_without_a_secret_key(tmp_path):
    result = run_manage(
        "check", PRODUCTION="1", REQUIRE_SECRET_KEY="1", SECRET_KEY="",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
    )
    assert result.returncode == 2
    assert "SECRET_KEY" in result.stderr


def test_a_secret_is_read_from_the_file_its_FILE_variable_names(tmp_path, monkeypatch):
    from reviewapp.config import ConfigError, database_config, env_str, redis_url

    secret = tmp_path / "secret_key"
    secret.write_text("from-a-docker-secret\n")
    monkeypatch.delenv("SOME_SECRET", raising=False)
    monkeypatch.setenv("SOME_SECRET_FILE", str(secret))
    assert env_str("SOME_SECRET") == "from-a-docker-secret"  # the trailing newline of `echo` is not the secret
    monkeypatch.setenv("SOME_SECRET", "from-the-environment")
    assert env_str("SOME_SECRET") == "from-the-environment"
    monkeypatch.delenv("SOME_SECRET")
    monkeypatch.setenv("SOME_SECRET_FILE", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="SOME_SECRET_FILE"):
        env_str("SOME_SECRET")
    config = database_config("postgres://legal@db:5432/legal", base_dir=tmp_path, password="p@ss/word")
    assert (config["USER"], config["PASSWORD"], config["NAME"]) == ("legal", "p@ss/word", "legal")
    assert redis_url("redis://redis:6379/0", password="p@ss/word") == "redis://:p%40ss%2Fword@redis:6379/0"
    assert redis_url("redis://:own@redis:6379/0", password="other") == "redis://:own@redis:6379/0"


def test_the_cache_takes_the_redis_database_after_the_brokers_on_the_same_server():
    from reviewapp.config import ConfigError, redis_cache_url, redis_url

    assert redis_cache_url("redis://redis:6379/0") == "redis://redis:6379/1"
    assert redis_cache_url("redis://redis:6379") == "redis://redis:6379/1"  # no database named: the broker's is 0
    assert redis_cache_url("redis://redis:6379/") == "redis://redis:6379/1"
    assert redis_cache_url("rediss://cache.example:6380/4") == "rediss://cache.example:6380/5"
    with_password = redis_url("redis://redis:6379/2", password="p@ss/word")
    assert redis_cache_url(with_password) == "redis://:p%40ss%2Fword@redis:6379/3"
    assert redis_cache_url("") == ""
    with pytest.raises(ConfigError, match="database 15; the cache takes the next one"):
        redis_cache_url("redis://redis:6379/15")
    with pytest.raises(ConfigError, match="REDIS_URL names database 'queues'"):
        redis_cache_url("redis://redis:6379/queues")


def test_the_settings_put_the_cache_and_the_broker_in_two_databases_of_one_redis(settings):
    from reviewapp.config import redis_cache_url

    if not settings.REDIS_URL:
        # The embedded defaults (the SQLite leg): no Redis at all, so nothing can share a database.
        assert settings.CACHES["default"]["BACKEND"] == "django.core.cache.backends.locmem.LocMemCache"
        assert settings.CELERY_BROKER_URL.startswith("filesystem://")
        return
    assert settings.CELERY_BROKER_URL == settings.REDIS_URL
    assert settings.CACHES["default"]["LOCATION"] == redis_cache_url(settings.REDIS_URL) != settings.REDIS_URL


def test_on_sqlite_drf_finds_no_postgres_fields_and_on_postgresql_it_does(tmp_path, monkeypatch):
    from reviewapp.config import database_config, without_postgres_fields

    name = "django.contrib.postgres.fields"
    monkeypatch.setitem(sys.modules, name, sys.modules.get(name))  # whatever this process had is put back after
    monkeypatch.delitem(sys.modules, name)
    without_postgres_fields(database_config("postgres://u@db:5432/app", base_dir=tmp_path))
    assert name not in sys.modules
    without_postgres_fields(database_config(f"sqlite:///{tmp_path / 'db.sqlite3'}", base_dir=tmp_path))
    with pytest.raises(ImportError):  # what DRF's compat module meets in a fresh SQLite process
        importlib.import_module(name)
