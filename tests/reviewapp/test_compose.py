"""The deployment: docker-compose services, commands, environment, secrets, volumes, health checks, the image.

No Docker engine (nor the compose plugin) runs on these machines, so the files themselves are read; CI exercises
the same shape with the local PostgreSQL, Redis and real workers, the proxy's configuration with a real nginx
(tests/trust/load/test_load_slow_clients.py) and the sweeper with real worker deaths
(tests/trust/faults/test_faults_recovery.py).
"""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_TEXT = (ROOT / "docker-compose.yml").read_text()
COMPOSE = yaml.safe_load(COMPOSE_TEXT)
APP_SERVICES = ("web", "worker-local", "worker-remote", "beat", "migrate")


def test_compose_declares_every_service_with_a_health_check_a_restart_policy_and_a_memory_limit():
    services = COMPOSE["services"]
    assert {"proxy", "web", "worker-local", "worker-remote", "beat", "db", "redis", "migrate"} == set(services)
    for name, service in services.items():
        assert service["healthcheck"]["test"], name
        if name != "migrate":
            assert service["restart"] == "unless-stopped", name
            assert service["deploy"]["resources"]["limits"]["memory"], name


def test_web_runs_gunicorn_and_workers_run_celery_against_postgres_and_redis():
    web = COMPOSE["services"]["web"]
    assert "gunicorn" in " ".join(web["command"]) and "reviewapp.wsgi" in " ".join(web["command"])
    for name in APP_SERVICES:
        service = COMPOSE["services"][name]
        env = service["environment"]
        assert env["DATABASE_URL"].startswith("postgres://")
        assert env["REDIS_URL"].startswith("redis://")
        assert env["SECRET_KEY_FILE"].startswith("/run/secrets/") and "SECRET_KEY" not in env
        assert service["depends_on"]["db"]["condition"] == "service_healthy"
        if name != "migrate":
            assert service["depends_on"]["redis"]["condition"] == "service_healthy"
            assert service["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def _option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def test_the_local_model_has_a_solo_worker_and_remote_providers_a_pool_each_on_its_own_queue():
    local, remote = COMPOSE["services"]["worker-local"], COMPOSE["services"]["worker-remote"]
    assert "--pool=solo" in local["command"] and _option(local["command"], "-Q") == "local"
    assert "--pool=prefork" in remote["command"] and _option(remote["command"], "-Q") == "remote"
    assert int(remote["command"][[c.startswith("--concurrency") for c in remote["command"]].index(True)]
               .split("=")[1]) > 1
    env = local["environment"]
    assert (env["CELERY_QUEUE_LOCAL"], env["CELERY_QUEUE_REMOTE"]) == ("local", "remote")
    assert "--concurrency" not in " ".join(local["command"])  # one process: its encoder uses the cores


def test_one_beat_runs_the_sweeper_with_no_schedule_file_on_the_var_volume():
    beat = COMPOSE["services"]["beat"]
    assert beat["command"][:4] == ["celery", "-A", "reviewapp", "beat"]
    # A schedule file on var/ (which the embedding cache can fill) stopped beat, and compose restarted it in a loop.
    assert "-s" not in beat["command"] and "--schedule" not in " ".join(beat["command"])
    assert "celerybeat-schedule" not in str(beat.get("healthcheck", ""))
    assert beat.get("deploy", {}).get("replicas", 1) == 1


def test_var_is_a_named_volume_shared_by_the_app_and_owned_by_the_images_user():
    assert {"pgdata", "redisdata", "appvar"} <= set(COMPOSE["volumes"])
    for name in APP_SERVICES:
        assert "appvar:/app/var" in COMPOSE["services"][name]["volumes"], name
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "chown -R app:app /app/var" in dockerfile
    user = re.findall(r"^USER (\S+)$", dockerfile, flags=re.M)
    assert user == ["app"]  # not root, and not nobody (which owned nothing and could write nothing)
    assert dockerfile.index("chown -R app:app /app/var") < dockerfile.index("USER app")
    assert "STATIC_ROOT=/app/static" in dockerfile  # collected files are the image's, not the volume's


def test_no_password_is_written_in_the_compose_file_and_secrets_come_from_uncommitted_files():
    assert not re.search(r"postgres://[^@/\s]*:[^@/\s]*@", COMPOSE_TEXT)  # no password in a database URL
    assert "POSTGRES_PASSWORD:" not in COMPOSE_TEXT and "requirepass legal" not in COMPOSE_TEXT
    db = COMPOSE["services"]["db"]["environment"]
    assert db["POSTGRES_PASSWORD_FILE"] == "/run/secrets/postgres_password"
    for name, secret in COMPOSE["secrets"].items():
        assert secret["file"].startswith("./secrets/"), name
    ignored = (ROOT / ".gitignore").read_text().split()
    assert "secrets/" in ignored and ".env" in ignored
    for name in APP_SERVICES:
        env = COMPOSE["services"][name]["environment"]
        assert env["DATABASE_PASSWORD_FILE"] == "/run/secrets/postgres_password"
        assert env["REDIS_PASSWORD_FILE"] == "/run/secrets/redis_password"
        assert {"postgres_password", "redis_password", "secret_key"} <= set(COMPOSE["services"][name]["secrets"])


def test_redis_has_a_password_persistence_and_a_broker_memory_policy():
    redis = COMPOSE["services"]["redis"]
    command = " ".join(redis["command"])
    assert "--requirepass" in command and "/run/secrets/redis_password" in command
    assert "--appendonly yes" in command and "--maxmemory-policy noeviction" in command
    assert "--maxmemory " in command and redis["volumes"] == ["redisdata:/data"]


def test_postgres_is_tuned_for_the_box():
    command = COMPOSE["services"]["db"]["command"]
    assert command[0] == "postgres" and any(c.startswith("shared_buffers=") for c in command)
    assert any(c.startswith("effective_cache_size=") for c in command)


def test_a_tls_terminating_buffering_proxy_is_the_only_published_service():
    services = COMPOSE["services"]
    published = {name for name, service in services.items() if service.get("ports")}
    assert published == {"proxy"}
    assert set(services["proxy"]["ports"]) == {"80:80", "443:443"}
    assert services["web"]["expose"] == ["8000"]
    nginx = (ROOT / "deploy" / "nginx" / "nginx.conf").read_text()
    assert "listen 443 ssl" in nginx and "include /etc/nginx/deploy/tls.conf" in nginx
    assert "server web:8000" in nginx and "return 301 https://" in nginx
    http = (ROOT / "deploy" / "nginx" / "http.conf").read_text()
    assert "proxy_request_buffering on" in http and "proxy_buffering on" in http
    assert "client_header_timeout" in http and "client_body_timeout" in http


def test_gunicorn_runs_threads_and_the_grace_periods_outlast_the_longest_request():
    web = COMPOSE["services"]["web"]
    command = web["command"]
    assert int(_option(command, "--threads")) > 1 and _option(command, "--worker-class") == "gthread"
    timeout = int(_option(command, "--timeout"))
    assert int(web["stop_grace_period"].rstrip("s")) > timeout
    assert int(_option(command, "--graceful-timeout")) >= timeout


def test_the_image_leaves_out_history_environments_local_data_and_secrets():
    ignored = (ROOT / ".dockerignore").read_text().split()
    for pattern in (".git", ".venv", "node_modules", "var", "*.sqlite3", "secrets", ".env"):
        assert pattern in ignored, pattern


def test_compose_reads_provider_keys_from_the_environment_only():
    for service in COMPOSE["services"].values():
        for key, value in (service.get("environment") or {}).items():
            if key.endswith("_API_KEY"):
                assert str(value).startswith("${"), f"{key} must come from the host environment"


def test_web_preloads_the_app_so_workers_fork_with_the_url_config_imported():
    # What the warm-up leaves built is checked in tests/test_cold_start.py (the preloaded master's probe).
    assert "--preload" in COMPOSE["services"]["web"]["command"]
    wsgi = (Path(__file__).resolve().parents[2] / "reviewapp" / "wsgi.py").read_text()
    assert "warm_up()" in wsgi
