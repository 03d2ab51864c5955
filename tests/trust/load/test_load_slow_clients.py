"""Slow clients against the deployment as docker-compose.yml runs it: nginx with the shipped configuration
(deploy/nginx/http.conf and site.conf; the TLS server is an include left out here) in front of gunicorn with the
compose file's own command (gthread, 4 x 4).

8 connections that send one header line a second and 8 that send their body 10 bytes a second are held open
while 20 ordinary requests are made: each must answer 200 (within a generous 10 s). Bare sync gunicorn, as the
compose file published it before, is shown stalling: 4 slow connections hold all 4 workers, and an ordinary
request gets no answer while they last.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO_ROOT
from tests.helpers import wait_until

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
STATIC = "/static/" + next(p for p in sorted((REPO_ROOT / "static").rglob("*")) if p.is_file()).relative_to(
    REPO_ROOT / "static").as_posix()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _compose_web_command() -> list[str]:
    return yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())["services"]["web"]["command"]


def _gunicorn(tmp_path: Path, arguments: list[str]) -> tuple[subprocess.Popen, int, Path]:
    """gunicorn on a free port of 127.0.0.1, on the embedded defaults (a SQLite file of its own, no broker)."""
    port = _free_port()
    log = tmp_path / f"gunicorn-{port}.log"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "PRODUCTION")}
    env.update(VAR_DIR=str(tmp_path / "var"), DEBUG="0", ALLOWED_HOSTS="127.0.0.1,localhost")
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "gunicorn", *arguments, "--bind", f"127.0.0.1:{port}"],
                                   cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    wait_until(lambda: _get(f"http://127.0.0.1:{port}{STATIC}", timeout=2) == 200 or process.poll() is not None,
               timeout=60, interval=0.3)
    assert process.poll() is None, log.read_text()[-3000:]
    return process, port, log


def _get(url: str, *, timeout: float) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            response.read()
            return response.status
    except OSError:
        return 0


def _nginx(tmp_path: Path, upstream_port: int) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    folder = tmp_path / "nginx"
    folder.mkdir()
    deploy = REPO_ROOT / "deploy" / "nginx"
    temp = "\n".join(f"  {kind}_temp_path {folder / kind};" for kind in ("client_body", "proxy", "fastcgi",
                                                                          "uwsgi", "scgi"))
    (folder / "nginx.conf").write_text(f"""
{"user root;" if os.geteuid() == 0 else ""}
worker_processes 1;
pid {folder / "nginx.pid"};
error_log {folder / "error.log"} warn;
events {{ worker_connections 512; }}
http {{
{temp}
  access_log off;
  include {deploy / "http.conf"};
  upstream app {{ server 127.0.0.1:{upstream_port}; keepalive 16; }}
  server {{
    listen 127.0.0.1:{port};
    include {deploy / "site.conf"};
  }}
}}
""")
    process = subprocess.Popen([NGINX, "-p", str(folder), "-c", str(folder / "nginx.conf"), "-g", "daemon off;"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    wait_until(lambda: _get(f"http://127.0.0.1:{port}{STATIC}", timeout=2) == 200 or process.poll() is not None,
               timeout=30, interval=0.2)
    assert process.poll() is None, (folder / "error.log").read_text()[-3000:]
    return process, port


class SlowClients:
    """Connections that dribble their request: one header line, or 10 bytes of body, a second."""

    def __init__(self, port: int, *, headers: int, bodies: int) -> None:
        self.port, self.stop = port, threading.Event()
        self.sockets: list[socket.socket] = []
        self.threads = [threading.Thread(target=self._header, daemon=True) for _ in range(headers)] + [
            threading.Thread(target=self._body, daemon=True) for _ in range(bodies)]

    def __enter__(self) -> SlowClients:
        for thread in self.threads:
            thread.start()
        time.sleep(1.5)  # every slow connection is open and has started its request
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.close()
        for thread in self.threads:
            thread.join(timeout=5)

    def _connect(self, first: bytes) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        self.sockets.append(sock)
        sock.sendall(first)
        return sock

    def _dribble(self, sock: socket.socket, piece: bytes) -> None:
        with contextlib.suppress(OSError):
            while not self.stop.wait(1.0):
                sock.sendall(piece)

    def _header(self) -> None:
        with contextlib.suppress(OSError):
            self._dribble(self._connect(f"GET {STATIC} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode()), b"X-Slow: 1\r\n")

    def _body(self) -> None:
        with contextlib.suppress(OSError):
            sock = self._connect(b"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                 b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n")
            self._dribble(sock, b"username=a")


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=20)


@pytest.fixture(scope="module")
def nginx_binary() -> str:
    if not Path(NGINX).is_file():
        pytest.fail("nginx is not installed: apt-get install nginx-light (.ci/run installs it)")
    return NGINX


def test_slow_clients_behind_the_shipped_proxy_do_not_delay_anyone_else(nginx_binary, tmp_path):
    command = _compose_web_command()
    assert command[0] == "gunicorn" and "--threads" in command
    arguments = command[1:]
    bind = arguments.index("--bind")
    del arguments[bind:bind + 2]  # the compose file binds 0.0.0.0:8000; here a free port of 127.0.0.1
    gunicorn, gunicorn_port, _log = _gunicorn(tmp_path, arguments)
    nginx, port = _nginx(tmp_path, gunicorn_port)
    try:
        with SlowClients(port, headers=8, bodies=8):
            answers = [_get(f"http://127.0.0.1:{port}{STATIC}", timeout=10) for _ in range(20)]
            assert answers == [200] * 20
            assert nginx.poll() is None and gunicorn.poll() is None
    finally:
        _stop(nginx)
        _stop(gunicorn)


def test_bare_sync_gunicorn_is_stalled_by_as_many_slow_clients_as_it_has_workers(tmp_path):
    """The failure the proxy removes (docker-compose.yml before: 4 sync workers published directly)."""
    gunicorn, port, log = _gunicorn(tmp_path, ["reviewapp.wsgi:application", "--preload", "--workers", "4",
                                               "--timeout", "60"])
    try:
        with SlowClients(port, headers=4, bodies=0):
            assert _get(f"http://127.0.0.1:{port}{STATIC}", timeout=3) == 0  # no answer while they dribble
        assert _get(f"http://127.0.0.1:{port}{STATIC}", timeout=10) == 200  # they left: answered again
    finally:
        _stop(gunicorn)
    assert re.search(r"Booting worker", log.read_text())
