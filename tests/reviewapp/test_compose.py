"""The scale-out shape: docker-compose services, commands, environment, health checks.

No Docker engine runs on these machines, so the file itself is checked; CI
exercises the same shape with the local PostgreSQL, Redis and a real worker.
"""

from pathlib import Path

import yaml

COMPOSE = yaml.safe_load((Path(__file__).resolve().parents[2] / "docker-compose.yml").read_text())


def test_compose_declares_the_four_services_with_health_checks():
    services = COMPOSE["services"]
    assert {"db", "redis", "web", "worker"} <= set(services)
    for name in ("db", "redis", "web", "worker"):
        assert "healthcheck" in services[name], name
        assert services[name]["healthcheck"]["test"], name


def test_web_runs_gunicorn_and_worker_runs_celery_against_postgres_and_redis():
    web, worker = COMPOSE["services"]["web"], COMPOSE["services"]["worker"]
    assert "gunicorn" in " ".join(web["command"]) and "reviewapp.wsgi" in " ".join(web["command"])
    assert "celery" in " ".join(worker["command"]) and "worker" in worker["command"]
    for service in (web, worker):
        env = service["environment"]
        assert env["DATABASE_URL"].startswith("postgres://")
        assert env["REDIS_URL"].startswith("redis://")
        assert "SECRET_KEY" in env
        assert service["depends_on"]["db"]["condition"] == "service_healthy"
        assert service["depends_on"]["redis"]["condition"] == "service_healthy"


def test_compose_reads_provider_keys_from_the_environment_only():
    for service in COMPOSE["services"].values():
        for key, value in (service.get("environment") or {}).items():
            if key.endswith("_API_KEY"):
                assert str(value).startswith("${"), f"{key} must come from the host environment"


def test_web_and_workers_are_restarted_when_they_exit():
    for name in ("web", "worker"):
        assert COMPOSE["services"][name]["restart"] == "unless-stopped"


def test_web_preloads_the_app_so_workers_fork_with_the_url_config_imported():
    # What the warm-up leaves built is checked in tests/test_cold_start.py (the preloaded master's probe).
    assert "--preload" in COMPOSE["services"]["web"]["command"]
    wsgi = (Path(__file__).resolve().parents[2] / "reviewapp" / "wsgi.py").read_text()
    assert "warm_up()" in wsgi
