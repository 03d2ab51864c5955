"""PRODUCTION=1 refuses to start without a SECRET_KEY (it used to run on the public development key), and
`check --deploy` is clean with the production settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT as REPO

pytestmark = pytest.mark.slow  # every test runs manage.py in a fresh process
KEY = "prod-" + "q" * 30 + "-a-long-random-production-secret-0123456789"


def _run(*args: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    dropped = {"DATABASE_URL", "REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE", "SECRET_KEY", "REQUIRE_SECRET_KEY",
               "DEBUG", "PRODUCTION"}
    full = {k: v for k, v in os.environ.items() if k not in dropped}
    full.update(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", ALLOWED_HOSTS="eval.example.org", **env)
    return subprocess.run([sys.executable, *args], cwd=REPO, env=full, capture_output=True, text=True, timeout=120)


def test_production_without_a_secret_key_refuses_to_start_naming_it(tmp_path):
    """No REQUIRE_SECRET_KEY needed, and DEBUG does not relax it: PRODUCTION=1 alone refuses."""
    for debug in ("0", "1"):
        check = _run("manage.py", "check", "--deploy", tmp_path=tmp_path, PRODUCTION="1", DEBUG=debug)
        assert check.returncode == 2, check.stdout + check.stderr
        assert "SECRET_KEY" in check.stderr and "Traceback" not in check.stderr
    # The WSGI application (what gunicorn loads) refuses too, with Django's ImproperlyConfigured.
    probe = _run("-c", (
        "from django.core.exceptions import ImproperlyConfigured\n"
        "try:\n    import reviewapp.wsgi\nexcept ImproperlyConfigured as error:\n    print('refused:', error)\n"
        "else:\n    print('started')"), tmp_path=tmp_path, PRODUCTION="1", DEBUG="0")
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.startswith("refused:") and "SECRET_KEY" in probe.stdout


def test_check_deploy_is_clean_with_production_settings_and_a_key(tmp_path):
    check = _run("manage.py", "check", "--deploy", "--fail-level", "WARNING", tmp_path=tmp_path,
                 PRODUCTION="1", DEBUG="0", SECRET_KEY=KEY, REDIS_URL="redis://127.0.0.1:6379/13")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "no issues" in check.stdout


def test_production_with_a_per_process_cache_refuses_to_start_naming_redis(tmp_path):
    """The login limit counts in the cache: each gunicorn worker's own local memory would multiply it."""
    check = _run("manage.py", "check", tmp_path=tmp_path, PRODUCTION="1", DEBUG="0", SECRET_KEY=KEY)
    assert check.returncode == 2, check.stdout + check.stderr
    assert "REDIS_URL" in check.stderr and "Traceback" not in check.stderr


def test_development_still_runs_without_a_key(tmp_path):
    check = _run("manage.py", "check", tmp_path=tmp_path, DEBUG="1")
    assert check.returncode == 0, check.stdout + check.stderr
